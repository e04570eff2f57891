import Foundation
@testable import StrataExplorer
import Testing

/// Issue 10, item 5: keys are declared once; dispatch, footer, help and the
/// README's key table come from ``KeyBinding/table``.
@Suite struct KeyBindingTests {
    static var readme: String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/explorer.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    @Test func theReadmeKeyTableIsTheGeneratedOne() throws {
        let readme = Self.readme
        let begin = try #require(readme.range(of: "<!-- keys:begin -->\n"), "README has the key table markers")
        let end = try #require(readme.range(of: "\n<!-- keys:end -->"))
        let table = String(readme[begin.upperBound..<end.lowerBound])
        #expect(table == KeyBinding.markdownTable, """
            README's key table differs from KeyBinding.table; paste this between the markers:
            \(KeyBinding.markdownTable)
            """)
    }

    @Test func noKeyIsBoundTwice() {
        var seen: [KeyPress] = []
        for binding in KeyBinding.table {
            for key in binding.triggers {
                #expect(!seen.contains(key), "\(key) is bound twice")
                seen.append(key)
            }
        }
    }

    @Test func everyBindingIsDispatchedAsDeclared() {
        for binding in KeyBinding.table {
            for key in binding.triggers {
                var input = NavigationTests.input()
                let actions = input.handle(key)
                switch binding.action {
                case .open(let text): #expect(input.commandLine == text, "\(key)")
                case .run(let command): #expect(actions == [.run(command)], "\(key)")
                case .help: #expect(input.showHelp, "\(key)")
                case .faster: #expect(actions == [.faster])
                case .slower: #expect(actions == [.slower])
                case .cycleTheme: #expect(actions == [.cycleTheme])
                case .flipToggle:
                    if case .character(let c) = key { #expect(actions == [.flipToggle(index: c.wholeNumberValue! - 1)]) }
                case .filter: #expect(input.filterLine != nil, "\(key)")
                case .focusNext, .focusPrevious, .down, .up, .pageDown, .pageUp:
                    #expect(input.focus != nil, "\(key) moves the focus")
                case .clearFocused: #expect(input.commandLine == "clear ")
                default: break
                }
            }
        }
    }

    @Test func helpAndFooterComeFromTheTable() {
        #expect(KeyHelp.keys.count == KeyBinding.documented.count)
        #expect(KeyHelp.keys.contains { $0.key == "Tab S-Tab" })
        #expect(KeyHelp.footer.map(\.key) == KeyBinding.table.compactMap { $0.footer?.key })
        #expect(KeyHelp.footer.suffix(2).map(\.label) == ["help", "quit"], "the footer keeps these two last")
    }
}
