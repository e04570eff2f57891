import Strata
import Testing

/// ``CacheLevel/sharesReadsInFlight``: a pool says so, wrappers, type erasure
/// and compositions pass it on, and nothing else claims it (a composition
/// over a level that does not share reads skips the bookkeeping it needs).
@Suite struct SharesReadsInFlightTests {
    @Test func aPoolSharesReadsAndWrappersErasureAndCompositionsSaySo() {
        let origin = BasicFetcher<String, String> { "v:\($0)" }
        let memory = MemoryCacheLevel<String, String>(capacity: 100)
        #expect(!origin.sharesReadsInFlight && !memory.sharesReadsInFlight)
        #expect(!(memory + origin).sharesReadsInFlight)
        let pooled = origin.pooled()
        #expect(pooled.sharesReadsInFlight)
        #expect(pooled.instrumented(name: "origin").capRequests(4).sharesReadsInFlight, "wrappers forward it")
        #expect(pooled.normalize().sharesReadsInFlight && !origin.normalize().sharesReadsInFlight)
        #expect((memory + pooled).sharesReadsInFlight && (pooled + memory).sharesReadsInFlight)
        #expect((memory + (memory + pooled).normalize()).sharesReadsInFlight)
        let erased: any CacheLevel<String, String> = memory + pooled
        #expect(erased.sharesReadsInFlight)
    }
}
