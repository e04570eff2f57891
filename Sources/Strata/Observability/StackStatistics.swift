/// The statistics of every instrumented level inside `level`, top first,
/// through wrappers, erasure (``CacheLevel/normalize()``) and compositions.
@usableFromInline
func statisticsInside(_ level: any CacheLevel) -> [LevelStatistics] {
    if let composed = level as? any ComposedLevels {
        return statisticsInside(composed.upperLevel) + statisticsInside(composed.lowerLevel)
    }
    if let source = level as? any LevelStatisticsSource { return source.heldStatistics }
    if let wrapper = level as? any WrapperLevel { return statisticsInside(wrapper.inner) }
    return []
}

/// A level that holds statistics of its own or of what it erased.
protocol LevelStatisticsSource {
    var heldStatistics: [LevelStatistics] { get }
}

extension InstrumentedCache: LevelStatisticsSource {
    var heldStatistics: [LevelStatistics] { [statistics] + statisticsInside(inner) }
}

extension SwitchCache: LevelStatisticsSource {
    var heldStatistics: [LevelStatistics] { statisticsInside(cacheA) + statisticsInside(cacheB) }
}

extension BasicCache: LevelStatisticsSource {
    var heldStatistics: [LevelStatistics] { statisticsClosure?() ?? [] }
}

extension CacheLevel {
    /// The statistics of every instrumented level in this level or stack,
    /// top first (through wrappers, ``normalize()`` and compositions): what a
    /// dashboard or ``statisticsSummary`` shows.
    public var levelStatistics: [LevelStatistics] { Strata.statisticsInside(self) }

    /// A table of every instrumented level's counters, top first: gets, hit
    /// ratio, hits, misses, errors, sets, back-fills, invalidations, p99.
    public var statisticsSummary: String {
        let header = ["level", "gets", "hit %", "hits", "misses", "errors", "sets", "back-fills", "invalidations", "p99"]
        let rows = levelStatistics.map { statistics -> [String] in
            let s = statistics.snapshot()
            let ratio = s.requests == 0 ? "-" : String(format: "%.1f", s.hitRatio * 100)
            let p99 = s.getP99.map { $0 >= 1_000_000 ? "\($0 / 1_000_000) ms" : "\($0 / 1_000) µs" } ?? "-"
            return [statistics.name, "\(s.gets)", ratio, "\(s.hits)", "\(s.misses)", "\(s.errors)", "\(s.sets)",
                    "\(s.backfills)", "\(s.invalidations)", p99]
        }
        let table = [header] + rows
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { row in
            row.enumerated().map { column, cell in
                column == 0 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
