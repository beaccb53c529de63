// A pi extension that forces a tool on every model request, as pi-flows forces `finish`
// and structured-output helpers force theirs: pi's `before_provider_request` hook
// (docs/extensions.md of @mariozechner/pi-coding-agent 0.73.1) replaces the payload pi-ai
// built. pi itself never sets `tool_choice` (pi-ai's anthropic provider sends one only when
// a caller passes `toolChoice`, and pi-agent-core passes none).
export default function (pi: any) {
  pi.on("before_provider_request", (event: any) => ({
    ...event.payload,
    tool_choice: { type: "tool", name: "read" },
  }));
}
