# Text embeddings: deterministic 256-dimension vectors by feature hashing of words and word
# pairs, L2-normalised, for similarity search prototypes. The same text always gives the same
# vector, on every run.
import hashlib
import math
import re

DIMENSIONS = 256


def embed(text):
    words = re.findall(r"[a-z0-9']+", text.lower())
    features = words + [a + " " + b for a, b in zip(words, words[1:])]
    vector = [0.0] * DIMENSIONS
    for feature in features:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % DIMENSIONS
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[index] += sign
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [round(v / norm, 6) for v in vector]


def service_handler(event, context):
    texts = event.get("texts") if isinstance(event, dict) else None
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return {"statusCode": 400, "body": {"error": "event.texts must be a non-empty list of strings"}}
    if len(texts) > 256:
        return {"statusCode": 400, "body": {"error": "at most 256 texts per call"}}
    return {"dimensions": DIMENSIONS, "embeddings": [embed(t) for t in texts]}
