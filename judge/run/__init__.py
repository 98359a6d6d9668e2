"""The run machinery: the loop that asks the judges, and what it needs on the way."""
