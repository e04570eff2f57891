/// What a cell is for; a theme maps each role to colours and attributes.
public enum Role: Int, CaseIterable, Sendable {
    case normal, title, border, label, value, hit, miss, error, dim, status, statusError
    case footer, footerKey, sparkline, toggleOn, toggleOff, helpText, helpKey, command
    /// The character under the command line's cursor (the command colours swapped).
    case cursor
    /// The focused pane's border.
    case focus
}

/// One character cell. A wide character fills its cell and marks the next as
/// a continuation.
public struct Cell: Equatable, Sendable {
    public var character: Character
    public var role: Role
    public var isContinuation: Bool

    public static let blank = Cell(character: " ", role: .normal, isContinuation: false)
}

/// A screen's worth of cells: the renderer's output, the backend's input.
public struct CellBuffer: Equatable, Sendable {
    public let width: Int
    public let height: Int
    /// Only ASCII is drawn: other text is transliterated (``ASCIIFallback``).
    public let ascii: Bool
    public private(set) var cells: [Cell]
    /// Where each pane is, so a mouse press finds its pane.
    public var regions: [Region] = []

    /// The rows (and columns, where panes share rows) of one focusable pane.
    public struct Region: Equatable, Sendable {
        public var focus: Focus
        public var rows: Range<Int>
        /// Every column unless panes stand side by side (compare mode).
        public var columns: Range<Int> = 0..<Int.max

        /// Whether the cell at (`x`, `y`) is in the region.
        public func contains(x: Int, y: Int) -> Bool { rows.contains(y) && columns.contains(x) }
    }

    /// The pane drawn at row `y` (in its first column), if any.
    public func focus(atRow y: Int) -> Focus? { focus(x: 0, y: y) }

    /// The pane drawn at (`x`, `y`), if any.
    public func focus(x: Int, y: Int) -> Focus? { Self.focus(x: x, y: y, in: regions) }

    /// The last of `regions` drawn at (`x`, `y`), if any.
    static func focus(x: Int, y: Int, in regions: [Region]) -> Focus? { regions.last { $0.contains(x: x, y: y) }?.focus }

    public init(width: Int, height: Int, ascii: Bool = false) {
        self.width = max(0, width)
        self.height = max(0, height)
        self.ascii = ascii
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    /// What marks text cut at the edge.
    public var ellipsis: String { ascii ? "..." : "…" }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Writes `text` from (x, y), clipped at `limit` columns (default: the
    /// right edge); with `ellipsis`, cut text ends in `…` so a cut is never
    /// silent. Control characters show as `·`. Returns the columns used.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, role: Role, limit: Int? = nil, ellipsis: Bool = false) -> Int {
        guard y >= 0, y < height, x < width else { return 0 }
        let available = min(width, x + (limit ?? width)) - x
        guard available > 0 else { return 0 }
        var shown: [(Character, Int)] = []
        var used = 0
        var cut = false
        outer: for character in text {
            for display in displayed(character) {
                let w = TextWidth.of(display)
                if w == 0 { continue }
                if used + w > available { cut = true; break outer }
                shown.append((display, w))
                used += w
            }
        }
        if cut && ellipsis {
            let mark = Array(self.ellipsis)
            while used + mark.count > available, let last = shown.popLast() { used -= last.1 }
            if used + mark.count <= available {
                shown += mark.map { ($0, 1) }
                used += mark.count
            }
        }
        var column = x
        for (character, w) in shown {
            if column >= 0 {
                for covered in column..<(column + w) { detachWideCharacter(at: covered, y: y) }
                self[column, y] = Cell(character: character, role: role, isContinuation: false)
                if w == 2 { self[column + 1, y] = Cell(character: " ", role: role, isContinuation: true) }
            }
            column += w
        }
        return used
    }

    /// A character as this buffer draws it: control characters as `·`, and
    /// in ASCII mode the transliteration.
    func displayed(_ character: Character) -> [Character] {
        if character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return [ascii ? "." : "·"]
        }
        return ascii ? ASCIIFallback.transliterate(character) : [character]
    }

    /// Fills a row segment with one character and role.
    public mutating func fill(_ character: Character, x: Int, y: Int, count: Int, role: Role) {
        guard y >= 0, y < height else { return }
        let shown = ascii ? (ASCIIFallback.transliterate(character).first ?? "?") : character
        // An empty range when x is past the edge or count is not positive
        // (a range with its lower bound above its upper would trap).
        let start = max(0, x), end = min(width, x &+ max(0, count))
        guard start < end else { return }
        for column in start..<end {
            detachWideCharacter(at: column, y: y)
            self[column, y] = Cell(character: shown, role: role, isContinuation: false)
        }
    }

    /// Before (x, y) is overwritten: if it is half of a wide character, the
    /// other half becomes a blank, so no cell claims a column it lost and
    /// every row still spans the buffer's width.
    mutating func detachWideCharacter(at x: Int, y: Int) {
        if self[x, y].isContinuation {
            if x > 0 { self[x - 1, y] = Cell(character: " ", role: self[x - 1, y].role, isContinuation: false) }
        } else if x + 1 < width, self[x + 1, y].isContinuation {
            self[x + 1, y] = Cell(character: " ", role: self[x + 1, y].role, isContinuation: false)
        }
    }

    /// Draws a box with `title` in its top edge.
    public mutating func box(x: Int, y: Int, width w: Int, height h: Int, title: [(String, Role)],
                             glyphs: BoxGlyphs, role: Role = .border) {
        guard w >= 2, h >= 2 else { return }
        fill(glyphs.horizontal, x: x + 1, y: y, count: w - 2, role: role)
        fill(glyphs.horizontal, x: x + 1, y: y + h - 1, count: w - 2, role: role)
        for row in (y + 1)..<(y + h - 1) {
            fill(glyphs.vertical, x: x, y: row, count: 1, role: role)
            fill(glyphs.vertical, x: x + w - 1, y: row, count: 1, role: role)
        }
        fill(glyphs.topLeft, x: x, y: y, count: 1, role: role)
        fill(glyphs.topRight, x: x + w - 1, y: y, count: 1, role: role)
        fill(glyphs.bottomLeft, x: x, y: y + h - 1, count: 1, role: role)
        fill(glyphs.bottomRight, x: x + w - 1, y: y + h - 1, count: 1, role: role)
        var column = x + 2
        let limit = x + w - 2
        for (index, (text, textRole)) in title.enumerated() {
            let piece = (index == 0 ? " " : "") + text + (index == title.count - 1 ? " " : "")
            column += put(piece, x: column, y: y, role: textRole, limit: max(0, limit - column), ellipsis: true)
        }
    }

    /// The screen as text, one line per row, trailing spaces removed.
    public var text: String {
        (0..<height).map { row in
            var line = ""
            for column in 0..<width where !self[column, row].isContinuation { line.append(self[column, row].character) }
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}

/// Border characters: Unicode box drawing, or ASCII when the locale is not UTF-8.
public struct BoxGlyphs: Equatable, Sendable {
    public var horizontal, vertical, topLeft, topRight, bottomLeft, bottomRight: Character

    public static let unicode = BoxGlyphs(horizontal: "─", vertical: "│", topLeft: "╭", topRight: "╮",
                                          bottomLeft: "╰", bottomRight: "╯")
    public static let ascii = BoxGlyphs(horizontal: "-", vertical: "|", topLeft: "+", topRight: "+",
                                        bottomLeft: "+", bottomRight: "+")
    /// The focused pane: double lines (ASCII: `=` and `#`), so focus shows
    /// without colour too.
    public static let unicodeFocused = BoxGlyphs(horizontal: "═", vertical: "║", topLeft: "╔", topRight: "╗",
                                                 bottomLeft: "╚", bottomRight: "╝")
    public static let asciiFocused = BoxGlyphs(horizontal: "=", vertical: "#", topLeft: "#", topRight: "#",
                                               bottomLeft: "#", bottomRight: "#")
}

/// Terminal column widths without libc (the same rules as wcwidth for the
/// ranges that matter: combining marks 0, East Asian wide and emoji 2).
public enum TextWidth {
    public static func of(_ character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars { width = max(width, of(scalar)) }
        return width
    }

    public static func of(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let v = scalar.value
        if (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1F64F).contains(v)
            || (0x1F900...0x1F9FF).contains(v) || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        return 1
    }

    public static func of(_ text: String) -> Int { text.reduce(0) { $0 + of($1) } }
}
