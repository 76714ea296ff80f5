/**
 * The icons of the Markdown outputs (PR comments), as Unicode characters: GitHub's `:warning:`
 * shortcodes show as the literal text everywhere else that renders Markdown (Bitbucket, Gitea,
 * Azure DevOps, a mail client, a terminal pager), while the characters read the same everywhere
 * and are shorter in the comment's character budget.
 */
export const ICON = {
  ok: '\u2705', // ✅ white heavy check mark
  error: '\u274c', // ❌ cross mark
  warning: '\u26a0\ufe0f', // ⚠️ warning sign, emoji presentation
  replacement: '\u{1f6a8}', // 🚨 police car light
  rollback: '\u23ea', // ⏪ fast reverse
  cut: '\u2702\ufe0f', // ✂️ scissors
  schedule: '\u{1f558}', // 🕘 nine o'clock
} as const;
