import Foundation
import Strata

/// What the key inspector shows in one frame (part of ``ViewState``).
public struct InspectorView: Equatable, Sendable {
    /// The inspected level's name.
    public var level: String
    /// The keys the filter lets through, in the chosen order.
    package var rows: [KeyInspection]
    /// How many keys the level listed (before the filter), and the listing's limit.
    public var listed: Int
    public var limit: Int
    package var hot: [KeyInspection]
    /// Keys `hot` was ranked among when a sample (``InspectorListing/hotSample``); `nil`: the whole level.
    public var hotSample: Int?
    public var sort: InspectorColumn
    public var descending: Bool
    /// The filter applied (case-insensitive, on the key).
    public var filter: String
    /// The selected row (of `rows`).
    public var selection: Int
    /// `true` until the first listing arrives.
    public var loading: Bool
    public var error: String?
    public var preview: KeyPreview?

    package init(level: String, rows: [KeyInspection] = [], listed: Int = 0, limit: Int = InspectorFeed.listLimit,
                 hot: [KeyInspection] = [], hotSample: Int? = nil, sort: InspectorColumn = .frequency, descending: Bool = true, filter: String = "",
                 selection: Int = 0, loading: Bool = false, error: String? = nil, preview: KeyPreview? = nil) {
        self.level = level
        self.rows = rows
        self.listed = listed
        self.limit = limit
        self.hot = hot
        self.hotSample = hotSample
        self.sort = sort
        self.descending = descending
        self.filter = filter
        self.selection = selection
        self.loading = loading
        self.error = error
        self.preview = preview
    }

    /// `keys`, those containing `filter` (case-insensitive), sorted by `column`
    /// (ties, and keys without the figure, after, by key).
    package static func arrange(_ keys: [KeyInspection], filter: String, sort column: InspectorColumn,
                                descending: Bool) -> [KeyInspection] {
        let matching = filter.isEmpty ? keys : keys.filter { $0.key.range(of: filter, options: .caseInsensitive) != nil }
        func figure(_ row: KeyInspection) -> Double? {
            switch column {
            case .key: nil
            case .size: row.size.map(Double.init)
            case .age: row.age.map(\.seconds)
            // No expiry sorts as the longest TTL.
            case .ttl: row.ttlLeft.map(\.seconds) ?? .infinity
            case .hits: row.hits.map(Double.init)
            case .frequency: row.frequency.map(Double.init)
            }
        }
        return matching.sorted { a, b in
            if column != .key {
                switch (figure(a), figure(b)) {
                case let (x?, y?) where x != y: return descending ? x > y : x < y
                case (_?, nil): return true
                case (nil, _?): return false
                default: break
                }
                return a.key < b.key
            }
            return descending ? a.key > b.key : a.key < b.key
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
