// Color palette: tints and shades of a colour, and its WCAG contrast ratio against white and
// black text.
function parseHex(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex || "");
  if (!m) return null;
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex(rgb) {
  return "#" + rgb.map((c) => Math.round(c).toString(16).padStart(2, "0")).join("");
}

function mix(rgb, target, amount) {
  return rgb.map((c, i) => c + (target[i] - c) * amount);
}

function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100;
}

function service_handler(event, context) {
  const rgb = parseHex(event && event.color);
  if (!rgb) return { statusCode: 400, body: { error: "event.color must be a hex colour such as #1e88e5" } };
  const steps = [0.2, 0.4, 0.6, 0.8];
  const white = [255, 255, 255];
  const black = [0, 0, 0];
  return {
    color: toHex(rgb),
    tints: steps.map((s) => toHex(mix(rgb, white, s))),
    shades: steps.map((s) => toHex(mix(rgb, black, s))),
    contrast: { on_white: contrast(rgb, white), on_black: contrast(rgb, black) },
    readable_text: contrast(rgb, white) >= contrast(rgb, black) ? "#ffffff" : "#000000",
  };
}

// Exported where the runtime loads handlers as CommonJS modules.
if (typeof module !== "undefined") module.exports = { service_handler };
