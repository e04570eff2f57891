import Foundation
@testable import StrataExplorer
import Testing

@Suite struct PipelineFileTests {
    @Test func exampleFileParsesAndBuilds() async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Examples/pipeline.yaml").standardized.path
        let spec = try PipelineFile.load(path: path)
        #expect(spec.name == "example")
        #expect(spec.levels.map(\.name) == ["L1", "L2", "origin"])
        #expect(spec.levels[0].kind == .memory(capacity: 64 * 1024, countLimit: 200))
        #expect(spec.levels[0].ttl == .seconds(30))
        #expect(spec.failSafe == FailSafeSpec(maxStale: .seconds(600), softTimeout: .milliseconds(200)))
        #expect(spec.levels[2].pooled && spec.levels[2].capRequests == 16)
        #expect(spec.levels[0].summary == "memory · adaptive · ttl 30s · cond:memory", "the default policy is named")
        let pipeline = try Pipeline(spec)
        #expect(pipeline.toggles.map(\.name) == ["memory", "disk"])
        #expect(spec.tree.contains("└─ origin: origin, simulated, latency 60ms ± 20ms"))
        #expect(spec.tree.hasSuffix("fail-safe: the last value seen, up to 10m old, when the levels fail; after 200ms (soft timeout)"))
        await pipeline.shutdown()
    }

    @Test(arguments: [
        ("levels:\n  - kind: memory\n    capacity: lots\n", 3, "levels[0].capacity", "expected a size"),
        ("levels:\n  - kind: memcached\n", 2, "levels[0].kind", "unknown level kind \"memcached\""),
        ("levels:\n  - kind: memory\n    capacity: 1MiB\n    colour: blue\n", 4, "levels[0].colour", "unknown field"),
        ("levels:\n  - kind: disk\n", 2, "levels[0].capacity", "missing"),
        ("levels: []\n", 1, "levels", "non-empty list"),
        ("name: x\n", 1, "levels", "missing"),
        ("levels:\n  - kind: memory\n    capacity: 1K\n  - kind: memory\n    name: L1\n    capacity: 1K\n", 4, "levels[1].name", "duplicate level name"),
        ("levels:\n  - kind: origin\n    failure-rate: 2\n", 3, "levels[0].failure-rate", "from 0 to 1"),
        ("levels:\n  - kind: origin\n    ttl: 5m\n", 3, "levels[0].ttl", "not to a origin"),
        ("levels:\n  - kind: http\n    base-url: ftp://x\n", 3, "levels[0].base-url", "http:// or https://"),
        ("levels:\n  - kind: memory\n    capacity: 1K\n    pooled: maybe\n", 4, "levels[0].pooled", "true or false"),
        ("levels:\n  - kind: memory\n    capacity: 1K\n    condition: two words\n", 4, "levels[0].condition", "one word"),
        ("levels:\n  - kind: memory\n    capacity: 1K\n    sliding: soon\n", 4, "levels[0].sliding", "expected a duration"),
        ("levels:\n  - kind: origin\n    sliding: 5s\n", 3, "levels[0].sliding", "unknown field"),
    ])
    func badFilesNameLineAndField(text: String, line: Int, field: String, message: String) {
        do {
            _ = try PipelineFile.parse(text, file: "bad.yaml")
            Issue.record("expected an error")
        } catch let error as PipelineFileError {
            #expect(error.file == "bad.yaml")
            #expect(error.line == line)
            #expect(error.field == field)
            #expect(error.message.contains(message), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func invalidYAMLIsReportedWithALine() {
        #expect(throws: PipelineFileError.self) { try PipelineFile.parse("levels:\n  - kind: [memory\n", file: "x.yaml") }
        do { _ = try PipelineFile.parse("levels:\n  - kind: [memory\n", file: "x.yaml") } catch let error as PipelineFileError {
            #expect(error.message.hasPrefix("not valid YAML"))
            #expect(error.line != nil)
        } catch {}
    }

    @Test func unitsParse() {
        #expect(Units.parseBytes("64KiB") == 65536)
        #expect(Units.parseBytes("1.5MiB") == 1_572_864)
        #expect(Units.parseBytes("10MB") == 10_000_000)
        #expect(Units.parseBytes("512") == 512)
        #expect(Units.parseBytes("-1") == nil)
        #expect(Units.parseBytes("lots") == nil)
        #expect(Units.parseDuration("50ms") == .milliseconds(50))
        #expect(Units.parseDuration("1.5s") == .milliseconds(1500))
        #expect(Units.parseDuration("5m") == .seconds(300))
        #expect(Units.parseDuration("2h") == .seconds(7200))
        #expect(Units.parseDuration("soon") == nil)
        #expect(Units.format(.seconds(300)) == "5m")
    }
}

@Suite struct ThemeTests {
    static var themesDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Themes").standardized.path
    }

    @Test(arguments: Theme.builtinNames)
    func eachThemeLoadsAndMatchesItsFile(name: String) throws {
        let builtin = try Theme.load(name, directories: [])
        let file = try Theme.load(Self.themesDirectory + "/\(name).theme", directories: [])
        #expect(builtin.colors == file.colors && builtin.attributes == file.attributes, "Themes/\(name).theme and the built-in differ")
        #expect(!builtin.colors.isEmpty)
        for role in Role.allCases { _ = builtin.style(for: role) }
    }

    @Test func badColourIsAnErrorWithItsLine() {
        let text = "# mine\ntheme[main_fg]=\"#12345\"\n"
        #expect(throws: ThemeError(file: "mine.theme", line: 2, message: "main_fg: bad colour \"#12345\" (use #rrggbb, #gg, \"R G B\" or \"\")")) {
            try Theme.parse(text, name: "mine", file: "mine.theme")
        }
        #expect(throws: ThemeError.self) { try Theme.parse("nonsense\n", name: "x", file: "x") }
        #expect(throws: ThemeError.self) { try Theme.parse("theme[hit_attr]=\"blink\"\n", name: "x", file: "x") }
    }

    @Test func btopThemesLoadUnknownKeysIgnored() throws {
        let btop = """
        # a btop theme
        theme[main_bg]=""
        theme[main_fg]="#cc"
        theme[cpu_start]="#50f095"
        theme[hi_fg]="255 30 30"
        theme[title_fg]="255 255 255"
        """
        let theme = try Theme.parse(btop, name: "btop", file: "btop.theme")
        #expect(theme.colors["main_fg"] == .rgb(0xCC, 0xCC, 0xCC))
        #expect(theme.colors["title_fg"] == .rgb(255, 255, 255))
        #expect(theme.colors["cpu_start"] == nil)
        #expect(theme.style(for: .hit).foreground == Theme.builtinDefault.style(for: .hit).foreground)
    }

    @Test func userThemesAreFoundByNameBeforeBuiltIns() throws {
        let dir = NSTemporaryDirectory() + "strata-themes-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/light.theme", contents: Data("theme[hit]=\"#010203\"\n".utf8))
        #expect(try Theme.load("light", directories: [dir]).colors["hit"] == .rgb(1, 2, 3))
        #expect(throws: ThemeError.self) { try Theme.load("nope", directories: [dir]) }
    }

    @Test func colourDegradation() {
        #expect(ThemeColor.rgb(255, 0, 255).xterm256 == 201)
        #expect(ThemeColor.rgb(255, 0, 255).basic8 == 5)  // magenta
        #expect(ThemeColor.rgb(128, 128, 128).xterm256 == 244)
        #expect(ThemeColor.rgb(0, 0, 0).xterm256 == 16)
        #expect(ThemeColor.terminalDefault.xterm256 == nil)
        #expect(Theme.monochromeAttributes(for: .status).contains(.reverse))
        #expect(Theme.monochromeAttributes(for: .error).contains(.bold))
    }
}
