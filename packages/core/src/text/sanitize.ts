/**
 * Untrusted text (issue bodies, comments) is cleaned before a model reads it: HTML comments, hidden elements and
 * invisible Unicode are where prompt injections hide from the humans reviewing the issue (field notes). What a human
 * sees on GitHub is what the model gets.
 */
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\u{E0000}-\u{E007F}]/gu;

export function sanitizeUntrusted(text: string, maxChars = 20_000): string {
  const cleaned = text
    .replace(/<!--[\s\S]*?(-->|$)/g, '')
    .replace(
      /<(details|summary|span|div|p)\b[^>]*\b(hidden|style\s*=\s*["'][^"']*display\s*:\s*none)[^>]*>[\s\S]*?<\/\1>/gi,
      '',
    )
    .replace(/<[^>]+\b(aria-hidden|hidden)\b[^>]*>/gi, '')
    .replace(INVISIBLE, '')
    .replace(/\r\n/g, '\n')
    .trim();
  return cleaned.length > maxChars ? `${cleaned.slice(0, maxChars)}\n… (truncated at ${maxChars} characters)` : cleaned;
}
