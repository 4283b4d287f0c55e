"""API keys: 'mbs_<id>_<secret>'; the database keeps the id and sha256 of the secret. Secrets are
32 random bytes, so a fast hash is enough (no password stretching needed)."""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from store.models import ApiKey, utcnow

ANONYMOUS = "anonymous"
KEY_ID = re.compile(r"[0-9a-f]{1,16}")


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(session: Session, owner: str) -> str:
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    session.add(ApiKey(id=key_id, owner=owner, secret_hash=_hash(secret)))
    session.commit()
    return f"mbs_{key_id}_{secret}"


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.created_at)))


def revoke_key(session: Session, key_id: str) -> bool:
    key = session.get(ApiKey, key_id)
    if key is None or key.revoked_at is not None:
        return False
    key.revoked_at = utcnow()
    session.commit()
    return True


def owner_of(session: Session, presented: str) -> str | None:
    """The owner of a presented key, or None for an unknown, malformed or revoked one."""
    prefix, _, rest = presented.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != "mbs" or not KEY_ID.fullmatch(key_id) or not secret:  # checked before the database sees it
        return None
    key = session.get(ApiKey, key_id)
    if key is None or key.revoked_at is not None or not hmac.compare_digest(key.secret_hash, _hash(secret)):
        return None
    return key.owner
