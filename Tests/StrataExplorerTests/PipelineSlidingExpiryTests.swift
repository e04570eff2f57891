import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// `sliding:` on a memory level in a pipeline file: parsed, named in the
/// summary, given to the level (an unread entry leaves the pane). Refused on
/// other kinds and for bad durations: ``PipelineFileTests``.
@Suite struct PipelineSlidingExpirySpecTests {
    static let file = """
        levels:
          - kind: memory
            capacity: 64KiB
            sliding: 3s
          - kind: origin
            latency: 1ms
        """

    @Test func slidingIsParsedAndNamed() throws {
        let spec = try PipelineFile.parse(Self.file, file: "sliding.yaml")
        #expect(spec.levels[0].sliding == .seconds(3))
        #expect(spec.levels[0].summary == "memory · adaptive · sliding 3s")
    }

    /// The built level slides: an unread entry expires (polled with a
    /// deadline: real time on a loaded machine, so 3 s leaves the get time to
    /// land before it is checked).
    @Test func theBuiltLevelExpiresUnreadEntries() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(try PipelineFile.parse(Self.file, file: "sliding.yaml")))
        await model.withShutdown {
            _ = await model.execute(.get(key: "k"))
            await model.pipeline.cache.waitForPendingWrites()
            let memory = model.pipeline.levels[0]
            #expect(memory.holds?("k") == true)
            let start = ContinuousClock.now
            var gone = false
            while ContinuousClock.now - start < .seconds(20) {
                if memory.holds?("k") == false { gone = true; break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            #expect(gone, "an entry unread for 20 s is still held with sliding: 3s")
        }
    }
}
