"""Physics below the planner and the rules: circuit capacity, cooling capacity and the assumptions behind them.

Both the planner (which must never place what a rule would reject) and the rules read these formulas, so a
threshold means the same thing in both. The assumptions are a policy config's shared sections.
"""

from clusterforge.physics.assumptions import Assumptions, Cooling, Electrical

__all__ = ["Assumptions", "Cooling", "Electrical"]
