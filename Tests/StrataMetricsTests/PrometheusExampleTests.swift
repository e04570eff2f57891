import Metrics
import Prometheus
import Strata
import StrataMetrics
import Testing

/// The docs' example (docs/observability.md): a stack's levels exported to
/// Prometheus through swift-metrics. (An app calls
/// `MetricsSystem.bootstrap(factory)` once and leaves `factory:` out; a test
/// process must not bootstrap the global system, so it passes the factory.)
@Suite struct PrometheusExampleTests {
    @Test func exportingToPrometheus() async throws {
        // docs: Export to Prometheus
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let l1 = memory.instrumented(name: "L1")
        let cache = l1 + BasicFetcher<String, String> { key in "value of \(key)" }
        let exporter = StrataMetricsExporter(levels: [.init(l1.statistics, entries: { memory.count })],
                                             dimensions: [("service", "users")], factory: factory)
        _ = try await cache.get("user:7")
        exporter.report()  // before each scrape, or `await exporter.run(every: .seconds(10))` in a task
        let scrape = registry.emitToString()
        // end docs
        #expect(scrape.contains(#"strata_gets_total{level="L1",service="users"} 1"#), "\(scrape)")
        #expect(scrape.contains(#"strata_misses_total{level="L1",service="users"} 1"#))
    }
}
