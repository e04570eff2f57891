/// A one-line text editor with a cursor, shell style: ←/→, Home/End,
/// Ctrl-A/E (start, end), Ctrl-U (delete to the start), Ctrl-W (delete the
/// word before the cursor), Ctrl-K (delete to the end), Backspace and Delete.
///
/// The cursor is kept as a count of characters *after* it, so typing at the
/// end (a paste) never walks the text: a megabyte arrives in linear time.
/// An edit before the cursor can join characters across it (a ZWJ typed
/// before `ZWJ 👩`, a control character deleted between an emoji and a ZWJ),
/// so every edit that leaves text after the cursor recounts it: the count
/// never exceeds `text.count`.
public struct LineEditor: Equatable, Sendable {
    public private(set) var text: String
    /// Characters after the cursor (0: the cursor is at the end).
    public private(set) var charactersAfterCursor = 0

    public init(_ text: String = "") { self.text = text }

    /// The index in `text` where the cursor is.
    var cursorIndex: String.Index {
        charactersAfterCursor == 0 ? text.endIndex : text.index(text.endIndex, offsetBy: -charactersAfterCursor)
    }

    /// The text before the cursor.
    public var beforeCursor: Substring { text[..<cursorIndex] }

    /// Applies a cursor or deletion key shared by every editable line
    /// (←/→, Home/End, Delete and Ctrl-B/F/A/E/D/U/K/W); returns whether
    /// `key` was one.
    public mutating func applyEditingKey(_ key: KeyPress) -> Bool {
        switch key {
        case .delete, .control("d"): deleteForward()
        case .left, .control("b"): moveLeft()
        case .right, .control("f"): moveRight()
        case .home, .control("a"): moveToStart()
        case .end, .control("e"): moveToEnd()
        case .control("u"): deleteToStart()
        case .control("k"): deleteToEnd()
        case .control("w"): deleteWordBefore()
        default: return false
        }
        return true
    }

    public mutating func insert(_ character: Character) {
        if charactersAfterCursor == 0 {
            text.append(character)
        } else {
            let tail = utf8AfterCursor
            text.insert(character, at: cursorIndex)
            recountCursor(utf8AfterCursor: tail)
        }
    }

    /// Inserts `string` at the cursor.
    public mutating func insert(contentsOf string: String) {
        if charactersAfterCursor == 0 {
            text.append(string)
        } else {
            let tail = utf8AfterCursor
            text.insert(contentsOf: string, at: cursorIndex)
            recountCursor(utf8AfterCursor: tail)
        }
    }

    /// Replaces the text from `start` (an index of `text`, at or before the
    /// cursor) to the cursor with `string`; the cursor ends after it.
    public mutating func replaceBeforeCursor(from start: String.Index, with string: String) {
        let tail = utf8AfterCursor
        text.replaceSubrange(start..<cursorIndex, with: string)
        recountCursor(utf8AfterCursor: tail)
    }

    /// UTF-8 bytes after the cursor: unchanged by an edit before it.
    var utf8AfterCursor: Int { text.utf8.distance(from: cursorIndex, to: text.endIndex) }

    /// Sets the cursor to the characters wholly within the last `tail` UTF-8
    /// bytes (after a character joined across the cursor, the cursor is
    /// after the joined character).
    mutating func recountCursor(utf8AfterCursor tail: Int) {
        var index = text.endIndex
        var count = 0
        while index > text.startIndex {
            let previous = text.index(before: index)
            guard text.utf8.distance(from: previous, to: text.endIndex) <= tail else { break }
            index = previous
            count += 1
        }
        charactersAfterCursor = count
    }

    /// Replaces the whole text; the cursor goes to the end.
    public mutating func replace(with string: String) {
        text = string
        charactersAfterCursor = 0
    }

    /// Deletes the character before the cursor; false when there is none.
    @discardableResult
    public mutating func backspace() -> Bool {
        let index = cursorIndex
        guard index > text.startIndex else { return false }
        let tail = utf8AfterCursor
        text.remove(at: text.index(before: index))
        if charactersAfterCursor > 0 { recountCursor(utf8AfterCursor: tail) }
        return true
    }

    /// Deletes the character under the cursor.
    public mutating func deleteForward() {
        guard charactersAfterCursor > 0 else { return }
        let tail = utf8AfterCursor
        let removed = text.remove(at: cursorIndex)
        recountCursor(utf8AfterCursor: tail - removed.utf8.count)
    }

    public mutating func moveLeft() {
        if cursorIndex > text.startIndex { charactersAfterCursor += 1 }
    }

    public mutating func moveRight() { charactersAfterCursor = max(0, charactersAfterCursor - 1) }
    public mutating func moveToStart() { charactersAfterCursor = text.count }
    public mutating func moveToEnd() { charactersAfterCursor = 0 }

    /// Ctrl-U: deletes everything before the cursor.
    public mutating func deleteToStart() {
        let tail = utf8AfterCursor
        text.removeSubrange(text.startIndex..<cursorIndex)
        recountCursor(utf8AfterCursor: tail)
    }

    /// Ctrl-K: deletes everything from the cursor on.
    public mutating func deleteToEnd() {
        text.removeSubrange(cursorIndex...)
        charactersAfterCursor = 0
    }

    /// Ctrl-W: deletes the word before the cursor and the spaces after it.
    public mutating func deleteWordBefore() {
        let end = cursorIndex
        var start = end
        while start > text.startIndex, text[text.index(before: start)] == " " { start = text.index(before: start) }
        while start > text.startIndex, text[text.index(before: start)] != " " { start = text.index(before: start) }
        let tail = utf8AfterCursor
        text.removeSubrange(start..<end)
        recountCursor(utf8AfterCursor: tail)
    }
}
