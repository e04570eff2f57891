import Foundation
import Strata
import Synchronization

/// One level's keys as the inspector last listed them.
public struct InspectorListing: Equatable, Sendable {
    public var level: Int
    package var keys: [KeyInspection]
    /// The level's hottest keys (by its frequency estimate, then hits): over
    /// the whole level where it ranks them itself (memory), else among those listed.
    package var hot: [KeyInspection]
    /// Keys the hot keys were ranked among when that was a sample (a listing
    /// cut at ``InspectorFeed/listLimit``, or a Redis `SCAN` that stopped); `nil`: the whole level.
    public var hotSample: Int?
    /// Why nothing could be listed (the level cannot be inspected, or failed).
    public var error: String?
}

/// A key's value as the preview shows it, and which levels hold the key.
public struct KeyPreview: Equatable, Sendable {
    public var key: String
    /// The inspected level.
    public var level: String
    public var loading = true
    /// The stored bytes in the inspected level (`nil`: it holds none now).
    public var value: Data?
    public var size: Int?
    /// `never`, or `in 28s (12:00:30)`, as of the peek.
    public var expiry: String?
    /// Levels that hold the key now, top first; those that do not; those that cannot be asked (an origin).
    public var holders: [String] = []
    public var absent: [String] = []
    public var uninspectable: [String] = []
    /// Levels whose peek failed, with the error.
    public var errors: [String] = []
    /// Levels whose own eviction bookkeeping counted the peek as an access
    /// (a Redis server before 7.2, which has no `CLIENT NO-TOUCH`).
    public var countedAsAccess: [String] = []

    public init(key: String, level: String) {
        self.key = key
        self.level = level
    }
}

/// Feeds the key inspector: the inspected level's listing, fetched on a
/// task (never on the screen's queue) and again every ``refreshInterval``
/// while the inspector asks for it, and a key's preview. Nothing here counts
/// as a use of any level (``LevelInspector``).
public final class InspectorFeed: Sendable {
    /// Keys listed at most: the table's rows, and the keys hot keys are found
    /// among in a level that does not rank its own (all but memory).
    public static let listLimit = 5_000
    /// Hot keys shown in the inspector's header.
    public static let hotCount = 5
    public static let refreshInterval: Duration = .seconds(2)

    struct State {
        var level: Int?
        var listing: InspectorListing?
        var fetching = false
        var fetchedAt: ContinuousClock.Instant?
        var preview: KeyPreview?
        var previewRequest = 0
        /// The listing's rows as last arranged, and how (see ``rows(level:filter:sort:descending:now:)``).
        var arranged: (filter: String, sort: InspectorColumn, descending: Bool, rows: [KeyInspection])?
    }

    private let state = Mutex(State())
    let pipeline: Pipeline
    /// Compare mode: the pipeline's side, named before its levels (`B:L1`).
    let side: ComparisonModel.Side?

    /// `side`: compare mode's side `pipeline` is (the inspector and the preview say `B:L1`).
    public init(pipeline: Pipeline, side: ComparisonModel.Side? = nil) {
        self.pipeline = pipeline
        self.side = side
    }

    /// Level `index`'s name as the inspector shows it: `L1`, or `B:L1` in compare mode.
    public func levelName(_ index: Int) -> String {
        (side.map { $0.rawValue + ":" } ?? "") + pipeline.levels[index].spec.name
    }

    /// The listing of `level` as last fetched (`nil` until the first fetch
    /// ends); starts a fetch when there is none for it yet or it is due.
    public func listing(level: Int, now: ContinuousClock.Instant = .now) -> InspectorListing? {
        let (start, listing) = state.withLock { state -> (Bool, InspectorListing?) in
            if state.level != level {
                state = State(previewRequest: state.previewRequest + 1)
                state.level = level
            }
            let due = state.fetchedAt.map { now - $0 >= Self.refreshInterval } ?? true
            let start = due && !state.fetching
            if start { state.fetching = true }
            return (start, state.listing)
        }
        if start { Task { await self.fetch(level) } }
        return listing
    }

    /// Fetches `index`'s listing now (the screen calls ``listing(level:now:)``).
    public func fetch(_ index: Int) async {
        var listing = InspectorListing(level: index, keys: [], hot: [], hotSample: nil)
        let level = pipeline.levels[index]
        if let inspector = level.cache.levelInspector {
            do {
                let listed = try await inspector.listing(Self.listLimit)
                listing.keys = listed.keys
                // A level that ranks its own walks all its keys; others' are ranked among those just listed.
                let hot = inspector.hotRanking == nil
                    ? LevelInspector<String, Data>.hotKeys(in: listed, count: Self.hotCount)
                    : try await inspector.hotKeys(Self.hotCount)
                listing.hot = hot.keys
                listing.hotSample = hot.isWholeLevel ? nil : hot.examined
            } catch {
                listing.error = "\(levelName(index)): listing failed: \(error)"
            }
        } else {
            listing.error = "\(levelName(index)) keeps no keys to list (\(level.spec.kind.label): nothing stored)"
        }
        state.withLock { state in
            state.fetching = false
            guard state.level == index else { return }
            state.listing = listing
            state.arranged = nil
            state.fetchedAt = .now
        }
    }

    /// The listing of `level` (as ``listing(level:now:)``) and its keys
    /// filtered and sorted: arranged once per listing and choice, so a frame
    /// that changes nothing sorts nothing (and its rows compare in O(1)).
    package func rows(level: Int, filter: String, sort: InspectorColumn, descending: Bool,
                     now: ContinuousClock.Instant = .now) -> (listing: InspectorListing?, rows: [KeyInspection]) {
        let listing = self.listing(level: level, now: now)
        return state.withLock { state in
            if let arranged = state.arranged, arranged.filter == filter, arranged.sort == sort, arranged.descending == descending,
               state.listing == listing {
                return (listing, arranged.rows)
            }
            let rows = InspectorView.arrange(listing?.keys ?? [], filter: filter, sort: sort, descending: descending)
            if state.listing == listing { state.arranged = (filter, sort, descending, rows) }
            return (listing, rows)
        }
    }

    /// Stops listing (the inspector closed); a fetch in flight is dropped.
    public func close() {
        state.withLock { state in state = State(previewRequest: state.previewRequest + 1) }
    }

    /// The preview asked for last, as far as it got.
    public var preview: KeyPreview? { state.withLock { $0.preview } }

    /// Peeks at `key` in every level (the value from `level`'s), on a task.
    public func requestPreview(key: String, level index: Int) {
        let name = levelName(index)
        let request = state.withLock { state -> Int in
            state.previewRequest += 1
            state.preview = KeyPreview(key: key, level: name)
            return state.previewRequest
        }
        Task {
            let preview = await self.peek(key, level: index)
            self.state.withLock { state in
                if state.previewRequest == request { state.preview = preview }
            }
        }
    }

    /// Closes the preview.
    public func closePreview() {
        state.withLock { state in
            state.previewRequest += 1
            state.preview = nil
        }
    }

    /// `key` peeked at in every level.
    public func peek(_ key: String, level index: Int) async -> KeyPreview {
        var preview = KeyPreview(key: key, level: levelName(index))
        for (position, level) in pipeline.levels.enumerated() {
            guard let inspector = level.cache.levelInspector else {
                preview.uninspectable.append(level.spec.name)
                continue
            }
            do {
                guard let entry = try await inspector.peek(key) else {
                    preview.absent.append(level.spec.name)
                    continue
                }
                preview.holders.append(level.spec.name)
                if entry.countedAsAccess { preview.countedAsAccess.append(level.spec.name) }
                if position == index {
                    preview.value = entry.value
                    preview.size = entry.size
                    preview.expiry = Self.expiry(entry.expiresAt)
                }
            } catch {
                preview.errors.append("\(level.spec.name): \(error)")
            }
        }
        preview.loading = false
        return preview
    }

    /// `never`, or `in 28s (12:00:30)`.
    static func expiry(_ deadline: CacheInstant?, now: CacheInstant = SystemClock().now()) -> String {
        guard let deadline else { return "never" }
        // Whole seconds (`in 299s`, not `in 299.9s`); under one, as is.
        let nanoseconds = max(0, deadline.nanosecondsSince1970 - now.nanosecondsSince1970)
        let left: Duration = nanoseconds >= 1_000_000_000 ? .seconds(nanoseconds / 1_000_000_000) : .nanoseconds(nanoseconds)
        var seconds = time_t(deadline.nanosecondsSince1970 / 1_000_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return "in \(Units.format(left)) (" + String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec) + ")"
    }
}
