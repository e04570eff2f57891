@testable import StrataExplorer
import Testing

/// D3: escape sequences are read whole; unknown ones are dropped whole.
@Suite struct EscapeSequenceParserTests {
    static func keys(_ text: String, endOfInput: Bool = true) -> [KeyPress] {
        var parser = EscapeSequenceParser()
        var keys = text.unicodeScalars.flatMap { parser.feed($0.value) }
        if endOfInput { keys += parser.endOfInput() }
        return keys
    }

    @Test func tmuxHomeAndEndAreKeysNotEscapePlusCharacters() {
        #expect(Self.keys("\u{1B}[1~") == [.home])
        #expect(Self.keys("\u{1B}[4~") == [.end])
        #expect(Self.keys("\u{1B}OH\u{1B}OF") == [.home, .end])
        #expect(Self.keys("\u{1B}[H\u{1B}[F") == [.home, .end])
        #expect(Self.keys("\u{1B}[7~\u{1B}[8~") == [.home, .end], "rxvt")
    }

    @Test func cursorAndEditingKeysWithAndWithoutModifiers() {
        #expect(Self.keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [.up, .down, .right, .left])
        #expect(Self.keys("\u{1B}[1;5C") == [.right], "Ctrl-Right")
        #expect(Self.keys("\u{1B}[5~\u{1B}[6~\u{1B}[3~\u{1B}[2~") == [.pageUp, .pageDown, .delete, .insert])
        #expect(Self.keys("\u{1B}OP") == [.help])
    }

    @Test func unknownSequencesAreDroppedWhole() {
        #expect(Self.keys("\u{1B}[200~ab\u{1B}[201~") == [.character("a"), .character("b")], "bracketed paste marks")
        #expect(Self.keys("\u{1B}[15;2~1") == [.character("1")], "Shift-F5, then 1")
        #expect(Self.keys("\u{1B}[?1;2c") == [], "a device attribute reply")
        #expect(Self.keys("\u{1B}OZ") == [])
    }

    @Test func aLoneEscapeIsTheEscapeKey() {
        #expect(Self.keys("\u{1B}") == [.escape])
        #expect(Self.keys("\u{1B}", endOfInput: false) == [])
        #expect(Self.keys("\u{1B}\u{1B}[1~") == [.escape, .home])
        #expect(Self.keys("\u{1B}\r") == [.escape, .enter])
        #expect(Self.keys("\u{1B}z") == [.escape, .character("z")], "Esc then z inside the Esc delay: both keys, none lost")
    }

    @Test func plainCharactersAndControls() {
        #expect(Self.keys("q:\u{3}\u{C}\r\u{7F}é") == [.character("q"), .character(":"), .interrupt, .redraw, .enter, .backspace, .character("é")])
    }

    @Test func halfReadSequenceWaitsForItsEnd() {
        var parser = EscapeSequenceParser()
        var keys = "\u{1B}[1".unicodeScalars.flatMap { parser.feed($0.value) }
        keys += parser.endOfInput()
        #expect(keys.isEmpty && !parser.isIdle)
        keys += "~".unicodeScalars.flatMap { parser.feed($0.value) }
        #expect(keys == [.home])
    }
}
