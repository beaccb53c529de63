"""What the hostile suite tried and found, for the summary line at the end of the run."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class Tally:
    tried: int = 0
    tracebacks: int = 0
    hangs: int = 0
    lost: int = 0

    def add(self, other: dict[str, int]) -> None:
        """Add another process's counts (an xdist worker's, as a dict)."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + other.get(f.name, 0))

    def line(self) -> str:
        return (
            f"hostile inputs: {self.tried} tried, {self.tracebacks} tracebacks, "
            f"{self.hangs} hangs, {self.lost} values lost"
        )


TALLY = Tally()
