/// ASCII stand-ins for the non-ASCII characters the explorer draws, for
/// terminals whose locale is not UTF-8 and for `--ascii`. Anything else
/// non-ASCII (a key or value typed in another script) shows as `?`.
public enum ASCIIFallback {
    static let table: [Character: String] = [
        "→": "->", "←": "<-", "↑": "^", "↓": "v", "·": "-", "µ": "u", "…": "...", "‖": "||", "▶": ">",
        "█": "#", "⚠": "!", "±": "+-", "─": "-", "│": "|", "╭": "+", "╮": "+", "╰": "+", "╯": "+", "├": "+",
        "└": "+", "┌": "+", "┐": "+", "┘": "+", "—": "-", "–": "-", "“": "\"", "”": "\"", "‘": "'",
        "’": "'", "×": "x", "▁": "_", "▂": ".", "▃": "-", "▄": "=", "▅": "+", "▆": "*", "▇": "#", "═": "=", "║": "#", "╔": "#", "╗": "#", "╚": "#", "╝": "#", "›": ">", "▕": "[", "▏": "]", "▎": "#", "▍": "#", "▌": "#", "▋": "#", "▊": "#", "▉": "#",
    ]

    /// `character` as one or more ASCII characters.
    public static func transliterate(_ character: Character) -> [Character] {
        if character.isASCII { return [character] }
        if let replacement = table[character] { return Array(replacement) }
        return ["?"]
    }

    /// `text` with every character transliterated.
    public static func transliterate(_ text: String) -> String {
        String(text.flatMap { transliterate($0) })
    }
}
