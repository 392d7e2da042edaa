"""policy: (verdict, history) -> decision. Pure functions."""
