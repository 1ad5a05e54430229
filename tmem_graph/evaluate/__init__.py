"""Evaluation on LoCoMo and LoCoMo-Plus: LLM-free recall metrics, baselines, ablations."""
