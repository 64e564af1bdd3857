"""Rules that apply only to target aws: EFA layout and placement, FSx sizes and tiers, node security."""
