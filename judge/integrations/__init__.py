"""Adapters to other evaluation frameworks and engines, each behind its own optional extra
(`judge.integrations.inspect`: Inspect AI, `pip install "diagnosis-judge[inspect]"`;
`judge.integrations.ray`: a Ray Dataset judged on a Ray cluster, `"diagnosis-judge[ray]"`).
Nothing here is imported by `import judge`."""
