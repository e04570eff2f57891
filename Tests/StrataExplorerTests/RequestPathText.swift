import Foundation

extension String {
    /// A request path without its latencies (`L1 miss 6ms → origin hit 48ms`
    /// → `L1 miss → origin hit`): a miss shows its time once it takes 1 ms,
    /// which any miss may on a loaded machine, so tests compare the levels
    /// and outcomes only.
    var withoutLatencies: String {
        replacingOccurrences(of: #" [0-9]+(\.[0-9]+)?(ns|µs|ms|s)(?=[ )]|$)"#, with: "", options: .regularExpression)
    }
}
