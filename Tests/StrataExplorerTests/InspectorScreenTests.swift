import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// The key inspector's frames (a pure function of ``InspectorView``) and its keys.
@Suite struct InspectorScreenTests {
    static func view(rows: Int = 30, preview: KeyPreview? = nil) -> InspectorView {
        let keys = (0..<rows).map { i in
            KeyInspection(key: "user:\(i)", size: 100 + i, age: i % 2 == 0 ? .seconds(i) : nil,
                          ttlLeft: i % 3 == 0 ? nil : .seconds(60 + i), frequency: i % 16)
        }
        let arranged = InspectorView.arrange(keys, filter: "", sort: .frequency, descending: true)
        return InspectorView(level: "L1", rows: arranged, listed: keys.count, hot: Array(arranged.prefix(3)),
                             sort: .frequency, descending: true, selection: 2, preview: preview)
    }

    /// A finished preview of `key` in L1, held by L1 and L2.
    static func preview(_ key: String, _ value: Data, expiry: String) -> KeyPreview {
        var preview = KeyPreview(key: key, level: "L1")
        preview.loading = false
        preview.value = value
        preview.size = value.count
        preview.expiry = expiry
        preview.holders = ["L1", "L2"]
        preview.uninspectable = ["origin"]
        return preview
    }

    static func state(_ inspector: InspectorView) -> ViewState {
        var state = RendererTests.fixture()
        state.inspector = inspector
        return state
    }

    @Test func theTableAt80x24ShowsEveryColumnTheSortAndTheSelection() {
        let text = Renderer(unicode: true).render(Self.state(Self.view()), width: 80, height: 24).text
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[1].contains("keys · L1 · 30 · sort freq ↓"), "\(text)")
        #expect(lines[2].contains("hot: user:15 (15) · user:14 (14) · user:13 (13)"), "\(text)")
        for column in ["key", "size", "age", "ttl left", "hits", "freq↓"] { #expect(lines[3].contains(column), "\(column)\n\(text)") }
        #expect(lines[4].contains("user:15") && lines[4].contains("115B"))
        #expect(lines[6].hasPrefix("║›user:13"), "the selected row is marked:\n\(text)")
        #expect(text.contains("never"), "a key without expiry")
        #expect(!text.contains("events newest first"), "the inspector takes the middle of the screen")
        #expect(lines[23].contains("Enter value") && lines[23].contains("Esc back"), "the inspector's footer:\n\(text)")
        #expect(lines.allSatisfy { TextWidth.of($0) <= 80 })
    }

    @Test(arguments: [(80, 24), (200, 60)])
    func snapshots(width: Int, height: Int) {
        let preview = Self.preview("user:3", Data("{\"name\": \"Ada\", \"visits\": 3}".utf8), expiry: "in 1m (12:01:00)")
        let renderer = Renderer(unicode: true)
        assertSnapshot(renderer.render(Self.state(Self.view()), width: width, height: height).text, named: "inspector-\(width)x\(height)")
        assertSnapshot(renderer.render(Self.state(Self.view(preview: preview)), width: width, height: height).text,
                       named: "inspector-preview-\(width)x\(height)")
    }

    @Test func scrollsToTheSelectionAndSaysWhere() {
        var view = Self.view(rows: 60)
        view.selection = 50
        let text = Renderer(unicode: true).render(Self.state(view), width: 80, height: 24).text
        #expect(text.contains("›" + view.rows[50].key))
        #expect(text.contains("51/60"))
    }

    @Test func aFilterNarrowsAndSaysSo() {
        var view = Self.view()
        view.rows = InspectorView.arrange(view.rows, filter: "USER:1", sort: .key, descending: false)
        view.filter = "USER:1"
        view.sort = .key
        view.descending = false
        let text = Renderer(unicode: true).render(Self.state(view), width: 100, height: 30).text
        #expect(text.contains("11 of 30") && text.contains("/USER:1") && text.contains("key↑"), "\(text)")
        #expect(!text.contains("user:2 "), "\(text)")
        view.rows = []
        view.filter = "zzz"
        #expect(Renderer(unicode: true).render(Self.state(view), width: 80, height: 24).text.contains("no key contains \"zzz\""))
    }

    @Test func aPreviewShowsTextOrHexExpiryAndHolders() {
        var preview = Self.preview("user:7", Data("hello\nworld".utf8), expiry: "in 28s (12:00:30)")
        let text = Renderer(unicode: true).render(Self.state(Self.view(preview: preview)), width: 80, height: 24).text
        #expect(text.contains("L1 · user:7") && text.contains("11B stored · expires in 28s (12:00:30)"), "\(text)")
        #expect(text.contains("held by L1, L2 · not asked: origin"))
        #expect(text.contains("hello") && text.contains("world"))
        preview.value = Data([0xde, 0xad, 0xbe, 0xef, 0x41])
        let hex = Renderer(unicode: true).render(Self.state(Self.view(preview: preview)), width: 80, height: 24).text
        #expect(hex.contains("0000  de ad be ef 41") && hex.contains("|....A|"), "\(hex)")
        #expect(hex.contains("hex: not UTF-8 text, 5 bytes"))
    }

    @Test func asciiModeDrawsOnlyASCII() {
        var preview = KeyPreview(key: "user:7", level: "L1")
        preview.loading = false
        let text = Renderer(unicode: false).render(Self.state(Self.view(preview: preview)), width: 80, height: 24).text
        #expect(text.unicodeScalars.allSatisfy { $0.isASCII }, "\(text)")
        #expect(text.contains("holds no value for it now"))
    }

    @Test func shortDurationsFitTheirColumns() {
        #expect(Renderer.shortDuration(.milliseconds(850)) == "850ms")
        #expect(Renderer.shortDuration(.seconds(42)) == "42s")
        #expect(Renderer.shortDuration(.seconds(725)) == "12m")
        #expect(Renderer.shortDuration(.seconds(3 * 86_400)) == "3d")
    }

    @Test func keysOpenSortFilterPreviewAndGoBack() {
        var input = InputController()
        input.completion = Completion(levels: ["L1", "L2", "origin"])
        _ = input.handle(.tab)
        #expect(input.handle(.enter) == [.inspect(level: 0)])
        #expect(input.inspector?.level == 0 && input.inspector?.sort == .frequency)
        _ = input.handle(.character("s"))
        #expect(input.inspector?.sort == .key && input.inspector?.descending == false)
        _ = input.handle(.character("S"))
        #expect(input.inspector?.descending == true)
        _ = input.handle(.character("/"))
        for c in "us" { _ = input.handle(.character(c)) }
        #expect(input.inspector?.filter == "us", "the filter narrows as it is typed")
        _ = input.handle(.backspace)
        #expect(input.inspector?.filter == "u")
        _ = input.handle(.enter)
        #expect(input.inspector?.filterLine == nil && input.inspector?.filter == "u")
        _ = input.handle(.down)
        #expect(input.inspector?.selection == 1)
        #expect(input.handle(.enter) == [.previewSelectedKey])
        #expect(input.handle(.escape) == [.closePreview])
        #expect(input.handle(.escape) == [] && input.inspector?.filter == "", "Esc clears the filter first")
        #expect(input.handle(.character("g")) == [] && input.commandLine == nil, "normal keys do not act under the inspector")
        _ = input.handle(.character(":"))
        #expect(input.commandLine == "", "the command line still opens")
        _ = input.handle(.escape)
        #expect(input.handle(.escape) == [.inspect(level: nil)])
        #expect(input.inspector == nil && input.focus == .level(0))
    }
}

extension InspectorScreenTests {
    @Test func hotKeysRankedInASampleSaySo() {
        var view = Self.view()
        let whole = Renderer(unicode: true).render(Self.state(view), width: 120, height: 30).text
        #expect(whole.contains("hot: user:15") && !whole.contains("sample"), "\(whole)")
        view.hotSample = 5_000
        let sampled = Renderer(unicode: true).render(Self.state(view), width: 120, height: 30).text
        #expect(sampled.contains("hot in a sample of 5000: user:15 (15)"), "\(sampled)")
        view.hot = []
        let none = Renderer(unicode: true).render(Self.state(view), width: 120, height: 30).text
        #expect(none.contains("hot in a sample of 5000: none known"), "\(none)")
    }

    @Test func aPeekThatCountedAsAnAccessSaysWhere() {
        var preview = Self.preview("user:7", Data("hello".utf8), expiry: "never")
        let quiet = Renderer(unicode: true).render(Self.state(Self.view(preview: preview)), width: 100, height: 30).text
        #expect(!quiet.contains("counted as an access"))
        preview.countedAsAccess = ["shared"]
        let text = Renderer(unicode: true).render(Self.state(Self.view(preview: preview)), width: 100, height: 30).text
        #expect(text.contains("peek counted as an access on shared (Redis < 7.2: no CLIENT NO-TOUCH)"), "\(text)")
    }
}
