# Cosine similarity ranker: ranks candidate vectors by cosine similarity to a query vector and
# returns the top k, for retrieval over embeddings.
import math


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def service_handler(event, context):
    query = event.get("query") if isinstance(event, dict) else None
    candidates = event.get("candidates") if isinstance(event, dict) else None
    if not isinstance(query, list) or not isinstance(candidates, list):
        return {"statusCode": 400, "body": {"error": "send query (a vector) and candidates ([{id, vector}])"}}
    k = event.get("k", 5)
    scored = []
    for candidate in candidates:
        vector = candidate.get("vector") if isinstance(candidate, dict) else None
        if not isinstance(vector, list) or len(vector) != len(query):
            return {"statusCode": 400, "body": {"error": "every candidate needs a vector as long as the query"}}
        scored.append({"id": candidate.get("id"), "score": round(cosine(query, vector), 6)})
    scored.sort(key=lambda item: item["score"], reverse=True)
    return {"results": scored[: max(1, int(k))]}
