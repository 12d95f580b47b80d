// JWT decoder: the header and claims of a JSON Web Token, and whether it has expired. It does
// NOT verify the signature: never trust a decoded token for access decisions.
function decodePart(part) {
  const base64 = part.replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
}

function service_handler(event, context) {
  const token = event && typeof event.token === "string" ? event.token.trim() : "";
  const parts = token.split(".");
  if (parts.length !== 3) {
    return { statusCode: 400, body: { error: "event.token must be a JWT: three dot-separated parts" } };
  }
  let header, claims;
  try {
    header = decodePart(parts[0]);
    claims = decodePart(parts[1]);
  } catch (e) {
    return { statusCode: 422, body: { error: "the header or the claims are not base64url JSON" } };
  }
  const now = Math.floor(Date.now() / 1000);
  const result = { header, claims, signature_verified: false };
  if (typeof claims.exp === "number") {
    result.expires_at = new Date(claims.exp * 1000).toISOString();
    result.expired = claims.exp <= now;
  }
  if (typeof claims.iat === "number") result.issued_at = new Date(claims.iat * 1000).toISOString();
  return result;
}

// Exported where the runtime loads handlers as CommonJS modules.
if (typeof module !== "undefined") module.exports = { service_handler };
