"""Rules that apply only to target onprem: the switched fabric you build yourself (tiers, oversubscription,
rails, switch ports)."""
