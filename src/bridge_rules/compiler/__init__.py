"""Layered rule files -> one :class:`~bridge_rules.runtime.Runtime`.

Each step is a small function: pins, layered sections, ordered stages, the
gate, inbound strips, binding adapters, repairs, the text/filter plan, and at
the end everything the request path needs, precomputed (effective adapters and
the history plan of every known local name). Every table entry keeps the span
it was written at, so the runtime can say which file and line decided.

Nothing here raises for bad rules: problems are diagnostics on
``runtime.rules.diagnostics``, and the runtime is still built from what did
compile, so lint can report everything in one run. ``bridge_rules.ruleset``
decides whether a rule set with problems may be used.

The steps live by job: :mod:`~bridge_rules.compiler.layering` lays the files over each
other, :mod:`~bridge_rules.compiler.stage_compile` compiles the ``names:`` stages,
:mod:`~bridge_rules.compiler.sections` the other sections, and
:mod:`~bridge_rules.compiler.assembly` makes the runtime; this module runs them in order.
"""

from __future__ import annotations

from bridge_rules.bindings.section import compile_adapters
from bridge_rules.compiled import CompiledRules
from bridge_rules.compiler.assembly import build_runtime, retargeted
from bridge_rules.compiler.layering import layer_section
from bridge_rules.compiler.models import compile_models
from bridge_rules.compiler.sections import SectionCompiler
from bridge_rules.compose import RuleSource
from bridge_rules.model import Inbound
from bridge_rules.policy import compile_policy, packaged_switches
from bridge_rules.repair.rules import compile_repair_section
from bridge_rules.runtime import Runtime
from bridge_rules.stages import PrefixStage as CompiledPrefix
from bridge_rules.textplan import compile_plan

__all__ = ["build_runtime", "compile_rules", "retargeted"]


class _Compiler(SectionCompiler):
    """The sections compiled in order and put together into one runtime."""

    def run(self) -> Runtime:
        pin, self.pin_span = self.pin("pin")
        local_pin, _ = self.pin("local_pin")
        bindings = self.bindings()
        stages = self.stages(pin, bindings)
        gate = self.gate()
        inbound = layer_section(self.files, "inbound")
        text = layer_section(self.files, "text")
        filters = layer_section(self.files, "filters")
        debug_log = layer_section(self.files, "debug_log")
        adapters, problems = compile_adapters(
            (b.binding, b.span, b.file.doc.source_map, b.index) for b in bindings.values()
        )
        self.diags.extend(problems)
        plan, problems = compile_plan(
            text.value if text else None, filters.value if filters else None, self.text_span
        )
        self.diags.extend(problems)
        policy, problems = compile_policy(
            [(f.rules.policy, f.doc.source_map) for f in self.files if f.rules.policy is not None],
            packaged_switches(),
        )
        self.diags.extend(problems)
        policy = policy.with_prefixes(
            tuple(s.value for s in stages if isinstance(s, CompiledPrefix) and s.value)
        )
        schema_profile, schema_span = self.schemas()
        gateway = self.gateway(inbound, stages)  # before `diagnostics` is taken: it reports
        repairs = compile_repair_section(
            (f.rules.repair or [], f.doc.source_map) for f in self.files
        )
        rules = CompiledRules(
            files=self.files,
            stages=tuple(stages),
            gate=gate,
            inbound_case=inbound.value.case if inbound else Inbound().case,
            strips=tuple(self.strips(inbound)),
            bindings=bindings,
            pin=pin,
            pin_span=self.pin_span,
            local_pin=local_pin,
            local_tools=tuple(self.local_tools(local_pin).items()),
            text=text.value if text else None,
            filters=filters.value if filters else None,
            suppressions=tuple(self.suppressions()),
            diagnostics=tuple(self.diags),
            adapters=adapters,
            repairs=repairs,
            gateway=gateway,
            unmapped=inbound.value.unmapped if inbound else Inbound().unmapped,
            agent_dispatch=inbound.value.agent_dispatch if inbound else "exact",
            wire_names=self.wire_names(schema_profile.target),
            schemas=schema_profile,
            schemas_span=schema_span,
            debug_log=debug_log.value if debug_log else None,
            models=compile_models(self.files),
        )
        return build_runtime(rules, plan, policy)


def compile_rules(source: RuleSource) -> Runtime:
    """Compile loaded rule files; problems are on ``.rules.diagnostics`` and nothing raises."""
    return _Compiler(source).run()
