import Foundation
import InMemoryTracing
import Strata
import StrataTracing
import StrataTestSupport
import Testing
import Tracing

/// `traced()`: one span per level a request touches, with hit or miss,
/// errors recorded, keys only when asked, nested under the caller's span.
@Suite struct TracedCacheTests {
    struct Down: Error {}

    @Test func aGetThroughAStackOpensASpanPerLevelTouched() async throws {
        let tracer = InMemoryTracer()
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(name: "disk", directory: dir.url, capacity: 1 << 20)
        let origin = BasicFetcher<String, String>(name: "origin") { "value of \($0)" }
        let stack = memory.traced(tracer: tracer) + disk.traced(tracer: tracer) + origin.traced(tracer: tracer, recordKeys: true)
        let value = try await tracer.withSpan("request", context: .topLevel, ofKind: .server) { _ in
            try await stack.get("user:7")
        }
        #expect(value == "value of user:7")
        await stack.waitForPendingWrites()
        let spans = tracer.finishedSpans
        let gets = spans.filter { $0.operationName.hasSuffix(" get") }
        #expect(gets.map(\.operationName) == ["memory get", "disk get", "origin get"], "\(spans.map(\.operationName))")
        #expect(gets.map { $0.attributes["cache.hit"]?.toSpanAttribute() } == [.bool(false), .bool(false), .bool(true)])
        let request = try #require(spans.first { $0.operationName == "request" })
        #expect(gets.allSatisfy { $0.traceID == request.traceID && $0.parentSpanID == request.spanID })
        #expect(gets[0].attributes["cache.key"] == nil, "keys are not recorded unless asked")
        #expect(gets[2].attributes["cache.key"]?.toSpanAttribute() == .string("user:7"))
        let backfills = spans.filter { $0.operationName.hasSuffix(" back-fill") }.map(\.operationName).sorted()
        #expect(backfills == ["disk back-fill", "memory back-fill"], "\(spans.map(\.operationName))")

        tracer.clearFinishedSpans()
        #expect(try await stack.get("user:7") == "value of user:7")
        #expect(tracer.finishedSpans.map(\.operationName) == ["memory get"], "a hit touches one level")
    }

    @Test func aFailingLevelRecordsTheErrorOnItsSpan() async throws {
        let tracer = InMemoryTracer()
        let failing = BasicCache<String, String>(name: "flaky", getIfPresent: { _ in throw Down() },
                                                 set: { _, _ in }, remove: { _ in }, clear: {}, onMemoryWarning: {})
        let cache = failing.traced(tracer: tracer)
        await #expect(throws: Down.self) { try await cache.getIfPresent("k") }
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.operationName == "flaky get" && span.errors.count == 1 && span.errors[0].error is Down)
        // A miss is no error.
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 10).traced(tracer: tracer)
        tracer.clearFinishedSpans()
        #expect(try await memory.getIfPresent("absent") == nil)
        #expect(tracer.finishedSpans.first?.errors.isEmpty == true)
        #expect(tracer.finishedSpans.first?.attributes["cache.hit"]?.toSpanAttribute() == .bool(false))
    }
}
