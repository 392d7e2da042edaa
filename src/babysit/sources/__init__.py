"""sources: where records come from (the run's log files, checkpoints on disk)."""
