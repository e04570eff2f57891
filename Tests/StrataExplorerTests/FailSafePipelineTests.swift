import Foundation
@testable import StrataExplorer
import Strata
import Testing

/// `fail-safe:` in a pipeline file: parsed with line-numbered errors, built
/// around the whole pipeline, and shown: a stale answer in the log, the
/// count in the title.
@Suite struct FailSafePipelineTests {
    @Test func aPipelineFileTakesFailSafe() throws {
        let spec = try PipelineFile.parse("""
            name: fs
            fail-safe:
              max-stale: 1h
              soft-timeout: 100ms
              hard-timeout: 2s
            levels:
              - kind: memory
                capacity: 1MiB
              - kind: origin
            """, file: "fs.yaml")
        #expect(spec.failSafe == FailSafeSpec(maxStale: .seconds(3600), softTimeout: .milliseconds(100), hardTimeout: .seconds(2)))
        let off = try PipelineFile.parse("fail-safe: ~\nlevels:\n  - kind: origin\n", file: "off.yaml")
        #expect(off.failSafe == nil)
    }

    @Test func badFailSafeFieldsAreNamedWithTheirLine() {
        func error(_ text: String) -> String {
            do { _ = try PipelineFile.parse(text, file: "f.yaml"); return "no error" } catch { return "\(error)" }
        }
        #expect(error("fail-safe:\n  soft-timeout: 1s\nlevels:\n  - kind: origin\n")
            == "f.yaml:2: fail-safe.max-stale: missing: how old a value may be when it is answered stale (e.g. 1h)")
        #expect(error("fail-safe:\n  max-stale: soon\nlevels:\n  - kind: origin\n")
            == "f.yaml:2: fail-safe.max-stale: expected a duration such as 100ms, 2s or 1h, got \"soon\"")
        #expect(error("fail-safe:\n  max-stale: 1h\n  retries: 3\nlevels:\n  - kind: origin\n")
            == "f.yaml:3: fail-safe.retries: unknown field (expected max-stale, soft-timeout, hard-timeout)")
        #expect(error("fail-safe: 1h\nlevels:\n  - kind: origin\n").hasPrefix("f.yaml:1: fail-safe: expected a mapping"))
    }

    @Test func aFailingOriginIsAnsweredStaleAndTheTitleCountsIt() async throws {
        let spec = PipelineSpec(name: "fs", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 64 * 1024, countLimit: nil)),
            LevelSpec(name: "origin", kind: .origin(latency: .milliseconds(1), jitter: .zero, failureRate: 1, valueSize: 64)),
        ], failSafe: FailSafeSpec(maxStale: .seconds(3600)))
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        await model.withShutdown {
            #expect(model.resilienceSummary == "fail-safe 1h: 0 stale")
            #expect(await !model.execute(.set(key: "k", value: "kept")).isError)
            #expect(await !model.execute(.clear(level: "L1")).isError)
            let answer = await model.execute(.get(key: "k"))
            #expect(!answer.isError, "\(answer.message)")
            #expect(model.events.contains { $0.text.contains("get k") && $0.text.contains("answered stale (seen") },
                    "\(model.events.prefix(3).map(\.text))")
            #expect(model.resilienceSummary == "fail-safe 1h: 1 stale")
            // A key never seen has nothing to fall back on: the failure shows.
            #expect(await model.execute(.get(key: "never")).isError)
        }
        var state = RendererTests.fixture()
        state.resilience = "fail-safe 1h: 1 stale"
        let frame = Renderer(unicode: true).render(state, width: 100, height: 24)
        let title = (0..<frame.width).map { String(frame[$0, 0].character) }.joined()
        #expect(title.contains("fail-safe 1h: 1 stale"), "\(title)")
    }
}
