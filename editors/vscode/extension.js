// Starts `bridge-rules lsp` (the command in the `bridge-rules.command` setting) for YAML files.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("bridge-rules")
    .get("command", ["bridge-rules", "lsp"]);
  client = new LanguageClient(
    "bridge-rules",
    "bridge-rules",
    { command, args, transport: TransportKind.stdio },
    { documentSelector: [{ scheme: "file", language: "yaml" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
