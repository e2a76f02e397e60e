#!/usr/bin/env python3
"""Verify judged's attestations with implementations judged did not write.

    verify.py PEM NOTE_LINE_FILE

Reads the witness's public key from PEM (as `judged key --pem` exports it), computes its
key id the way docs/spec/attestation.md says (the SHA-256 of the SubjectPublicKeyInfo DER,
hex), and verifies the DSSE envelope on the one line of NOTE_LINE_FILE with
securesystemslib's `Envelope.verify` and an Ed25519 `SSlibKey`. Then parses the payload as
an in-toto Statement with the `in-toto-attestation` package's protobuf (unknown fields are
an error) and runs its `validate()`. Prints one JSON object on success: the key id that
verified, the statement's type, predicate type and subject, and the predicate's base.
Exits 1 naming what failed.
"""

import hashlib
import json
import sys

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key
from google.protobuf import json_format
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.statement import Statement
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey


def main(pem_path, note_path):
    public_key = load_pem_public_key(open(pem_path, "rb").read())
    spki = public_key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    keyid = hashlib.sha256(spki).hexdigest()
    key = SSlibKey.from_crypto(public_key, keyid=keyid)
    envelope = Envelope.from_dict(json.loads(open(note_path, encoding="utf-8").read()))
    try:
        accepted = envelope.verify([key], 1)
    except VerificationError as error:
        print(f"securesystemslib: the envelope does not verify: {error}", file=sys.stderr)
        return 1
    if envelope.payload_type != "application/vnd.in-toto+json":
        print(f"payloadType is {envelope.payload_type!r}", file=sys.stderr)
        return 1
    parsed = json_format.Parse(envelope.payload.decode("utf-8"), statement_pb2.Statement())
    statement = Statement.copy_from_pb(parsed)
    statement.validate()
    print(json.dumps({
        "verified_keyids": sorted(accepted),
        "type": statement.pb.type,
        "predicate_type": statement.pb.predicate_type,
        "reviewed_base": json_format.MessageToDict(statement.pb.predicate).get("reviewedBase"),
        "subject": [
            {"name": s.name, "digest": dict(s.digest)} for s in statement.pb.subject
        ],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
