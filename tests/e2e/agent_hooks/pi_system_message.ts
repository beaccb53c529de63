// A pi extension that adds a mid-conversation system message, as Claude Code now sends
// them: once the request has history, a `{"role": "system"}` message goes in before the
// latest user turn. pi-ai's anthropic provider never writes one itself (its convertMessages
// emits user and assistant turns only); `before_provider_request` replaces the payload.
export default function (pi: any) {
  pi.on("before_provider_request", (event: any) => {
    const messages = event.payload.messages;
    if (messages.length < 2) return undefined;
    const reminder = { role: "system", content: "Reminder: answer in one line." };
    return {
      ...event.payload,
      messages: [...messages.slice(0, -1), reminder, messages[messages.length - 1]],
    };
  });
}
