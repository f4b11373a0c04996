"""Time in the graph: tiers (hot/warm/cold named graphs), superseded versions, git history."""
