"""Adapters to other evaluation frameworks, each behind its own optional extra
(`judge.integrations.inspect`: Inspect AI, `pip install "diagnosis-judge[inspect]"`)."""
