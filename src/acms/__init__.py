"""acms: a project as a knowledge graph, assembled into token-exact context for LLM agents."""

from __future__ import annotations

__version__ = "0.1.0"
