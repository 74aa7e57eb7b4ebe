"""Every test of the lab runs offline: the scripted models, and no network connection at all."""

import socket

import pytest

from decompkit.lab.models import MODEL_ENV


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Scripted models only; any attempt to open a network connection fails the test."""
    monkeypatch.delenv(MODEL_ENV, raising=False)

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
