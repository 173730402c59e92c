"""Agents that combine search and the learned network (`search`)."""
