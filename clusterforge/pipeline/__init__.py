"""The one pipeline from a blueprint to a verdict (`analysis`): every command, the lab, the stack guard and the
CrossGuard pack go through it."""
