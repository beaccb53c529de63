"""One request's rewriter: the names, the history walk, ``tool_choice`` and ``system``.

A :class:`Rewriter` holds what a request's ``tools[]`` decided (``transform.outbound_tools``)
and rewrites the rest of the request under it. Copy-on-write: only the containers on the
path to a change are copied, and the input is never mutated.
"""

from __future__ import annotations

from typing import Any

from bridge_rules.callids import IdRule, id_rule, wire_id
from bridge_rules.runtime import Runtime
from bridge_rules.schemas import Shape
from bridge_rules.transform.model_fit import MARK, SEALED, SEALED_KINDS
from bridge_rules.transform.references import holds_references, rename_references
from bridge_rules.transform.results import seals


class Rewriter:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.plan = rt.plan
        self.renames: dict[str, str] = {}
        self.typed: set[str] = set()
        self.dropped: list[str] = []
        self.denied: dict[str, str] = {}
        """Tools the policy took out, with the rule that did (``policy:``)."""
        self.registered: list[str] = []
        self.search = False
        """Whether ``tool_reference`` names are renamed (the tools allow tool search)."""
        self.history = rt.history
        self.seals = seals(rt)
        self.shapes: dict[str, Shape] = {}
        """How calls cross the schema conversion of each tool this request sent, where it
        changes them (``bridge_rules.schemas``): this request's own, never a worker's."""
        self.shape_keys: list[tuple[str, bytes | None]] = []
        self.ids: IdRule = id_rule(rt.rules.schemas.target)  # the target's id rule
        self.marked = False
        """A thinking block the walk passed may carry the proxy's model mark
        (:mod:`~bridge_rules.transform.model_fit`), which the walk leaves to the fit: it
        carries one, or it stands in a dict or list subclass the walk does not look into."""

    def wire(self, name: str) -> str:
        if name in self.typed:
            return name
        wire = self.renames.get(name)
        if wire is None:
            wire = self.rt.outbound_name(name)
            if wire != name:
                self.renames[name] = wire
        return wire

    def tool_result(self, block: dict[str, Any]) -> dict[str, Any]:
        name = block.get("name")
        if isinstance(name, str):
            wire = self.wire(name)
            if wire != name:
                return {**block, "name": wire}
        return block

    def history_key(self) -> tuple[frozenset[str], bool, frozenset[tuple[str, bytes | None]]]:
        """Everything :meth:`messages` reads besides the rules and the messages themselves.

        Two rewriters with equal keys over one runtime rewrite any message to equal
        output, so the outbound cache stores a message's output under this key
        (``transform.cached``). A new input of :meth:`messages` belongs here too.
        """
        return frozenset(self.typed), self.search, frozenset(self.shape_keys)

    def messages(self, messages: list[Any]) -> list[Any] | None:
        """Every message's own rewrite: sealed ids opened (:mod:`bridge_rules.transform.results`,
        so the rest of the walk sees the call as the model made it), ``tool_use`` and
        ``tool_result`` names, history replay, and ``tool_reference`` names when ``search``.

        The hot loop of a long history: inlined type checks, copies only on change.
        Nothing else in the request touches a message afterwards, so this is also
        what the outbound cache stores per message.
        """
        out: list[Any] | None = None
        tool_result, seals = self.tool_result, self.seals
        search, rename = self.search, self.wire  # a typed tool's reference keeps its name
        seen, checked = self.ids.seen(), self._checked_id
        # A tool_use's replay, inlined: once per call of a history (issue 36).
        typed, renames, shapes = self.typed, self.renames, self.shapes
        history, history_plan = self.history, self.rt.history_plan
        for i, message in enumerate(messages):
            if type(message) is not dict:
                if isinstance(message, dict):
                    self.marked = True  # a subclass, not looked into: the fit does
                continue
            content = message.get("content")
            if type(content) is not list:
                if isinstance(content, list):
                    self.marked = True  # a subclass, not looked into: the fit does
                continue
            new_content: list[Any] | None = None
            for j, block in enumerate(content):
                if type(block) is not dict:
                    if isinstance(block, dict):
                        self.marked = True  # a subclass, not looked into: the fit does
                    continue
                kind = block.get("type")
                if kind == "tool_use":
                    new_block = block if seals is None else seals.tool_use(block)
                    name = new_block.get("name")
                    if not isinstance(name, str) or name in typed:
                        pass
                    elif "input" not in new_block:
                        wire = rename(name)
                        if wire != name:
                            new_block = {**new_block, "name": wire}
                    else:
                        args = new_block["input"]
                        wire, convert = history.get(name) or history_plan(name)
                        new_args = convert(args) if convert is not None else args
                        shape = shapes.get(name)
                        if shape is not None:
                            new_args = shape.forward(new_args)
                        if wire != name or new_args is not args:
                            if wire != name and name not in renames:
                                renames[name] = wire
                            new_block = new_block.copy()
                            new_block["name"] = wire
                            new_block["input"] = new_args
                    value = new_block.get("id")
                    if type(value) is str and value not in seen:
                        new_block = checked(new_block, "id", value)
                elif kind == "tool_result":
                    new_block = block if seals is None else seals.tool_result(block)
                    if "name" in new_block:
                        new_block = tool_result(new_block)
                    value = new_block.get("tool_use_id")
                    if type(value) is str and value not in seen:
                        new_block = checked(new_block, "tool_use_id", value)
                    if search:
                        new_block = rename_references(new_block, rename)
                elif search and holds_references(kind):
                    new_block = rename_references(block, rename)
                else:
                    if kind in SEALED_KINDS:
                        sealed = block.get(SEALED[kind])
                        if isinstance(sealed, str) and sealed.startswith(MARK):
                            self.marked = True
                    continue
                if new_block is not block:
                    if new_content is None:
                        new_content = content.copy()
                    new_content[j] = new_block
            if new_content is not None:
                if out is None:
                    out = messages.copy()
                new_message = message.copy()
                new_message["content"] = new_content
                out[i] = new_message
        return out

    def _checked_id(self, block: dict[str, Any], key: str, value: str) -> dict[str, Any]:
        """The block with its id ``value`` as the target accepts it (:mod:`bridge_rules.callids`):
        the same function of the id alone for a call and its result, so they stay paired. A
        valid id is remembered, so the walk finds it in ``IdRule.seen`` next time."""
        rule = self.ids
        if rule.matcher()(value) is not None:
            rule.remember(value)
            return block
        return {**block, key: wire_id(value, rule)}

    def seal_refusals(self) -> int:
        """Seals found so far on calls they were not made for (``transform.results``)."""
        return 0 if self.seals is None else self.seals.refusals()

    def run_alone(
        self, messages: list[Any]
    ) -> tuple[list[Any] | None, tuple[tuple[str, str], ...]]:
        """Messages rewritten (None: unchanged) and the renames they bring on their own.

        The renames also join this request's, in order; the cache stores the run's own.
        """
        shared, self.renames = self.renames, {}
        try:
            out = self.messages(messages)
            own = tuple(self.renames.items())
        finally:
            self.renames = shared
        for name, wire in own:
            shared.setdefault(name, wire)
        return out, own

    def add_renames(self, renames: tuple[tuple[str, str], ...]) -> None:
        """Renames a cached message brought, in the order the uncached walk would add them."""
        for name, wire in renames:
            self.renames.setdefault(name, wire)

    def tool_choice(self, choice: Any) -> tuple[bool, Any]:
        """(keep, value): a forced choice of a dropped tool cannot be honoured."""
        if not isinstance(choice, dict) or choice.get("type") != "tool":
            return True, choice
        name = choice.get("name")
        if not isinstance(name, str):
            return True, choice
        if name in self.dropped:
            return False, None
        wire = self.wire(name)
        return True, choice if wire == name else {**choice, "name": wire}

    def system(self, system: Any) -> Any:
        ops = self.plan.system_ops
        if isinstance(system, str):
            return _apply(ops, system)
        if not isinstance(system, list):
            return system
        out: list[Any] | None = None
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                continue
            text = block.get("text")
            if not isinstance(text, str):
                continue
            new_text = _apply(ops, text)
            if new_text != text:
                if out is None:
                    out = list(system)
                out[i] = {**block, "text": new_text}
        return system if out is None else out


def _apply(ops: tuple[Any, ...], text: str) -> str:
    for op in ops:
        text = op.apply(text)
    return text
