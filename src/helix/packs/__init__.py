"""Domain packs: plugins Helix ships for one kind of work (``engineering``, docs/packs/)."""

__all__: list[str] = []
