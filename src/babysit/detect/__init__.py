"""detect: records -> verdicts and incidents, with evidence. Pure."""
