"""The LLM judge: rubrics as data, a strict reply parser, and a cached HTTP client for the judge models."""
