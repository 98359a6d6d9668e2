"""Format adapters: benchmark files in, `IncidentSpec` and `Submission` out."""
