/// W-TinyLFU with a fixed 1% window: the reference the adaptive policy is
/// measured against (libCacheSim's and Caffeine's textbook layout), the
/// simulator's own, not the memory level's.
///
/// - A new key enters the window (LRU, 1% of the capacity, at least one
///   entry). The window's overflow duels main's least recent probation entry:
///   the one the sketch has seen more often stays (ties keep the victim).
/// - Main is segmented LRU: probation, and protected (80% of main) for keys
///   hit in main.
/// - The sketch is a 4-bit count-min sketch (four rows, 16 counters per
///   entry in each) halved every 10 × capacity increments; every request
///   counts. Keys are hashed with a fixed mix, so a run is repeatable.
/// Objects count as one each: sizes are ignored, so on a sized trace the
/// capacity counts objects (a reference for unsized traces).
public final class TinyLFUPolicy: Policy {
    public var name: String { "tinylfu" }

    private enum Region { case window, probation, protected }
    private struct Node { var key: Int; var region: Region; var prev = -1, next = -1 }
    private struct List { var first = -1, last = -1, count = 0 }

    private var nodes: [Node] = []
    private var free: [Int] = []
    private var index: [Int: Int] = [:]
    private var window = List(), probation = List(), protected = List()
    private let capacity: Int, windowLimit: Int, protectedLimit: Int
    private var sketch: ReferenceSketch

    /// A cache of `capacity` objects.
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        windowLimit = max(1, self.capacity / 100)
        protectedLimit = Int(Double(self.capacity - windowLimit) * 0.8)
        sketch = ReferenceSketch(entries: self.capacity)
    }

    public func access(key: Int, size: Int) -> Bool {
        sketch.increment(key)
        if let id = index[key] {
            let region = nodes[id].region
            unlink(id)
            if region == .window {
                append(id, .window)
            } else {
                append(id, .protected)
                while protected.count > protectedLimit, protected.first >= 0 {
                    let demoted = protected.first
                    unlink(demoted)
                    append(demoted, .probation)
                }
            }
            return true
        }
        let id: Int
        if let reused = free.popLast() {
            id = reused
            nodes[id] = Node(key: key, region: .window)
        } else {
            id = nodes.count
            nodes.append(Node(key: key, region: .window))
        }
        index[key] = id
        append(id, .window)
        while window.count > windowLimit {
            let candidate = window.first
            unlink(candidate)
            if window.count + probation.count + protected.count < capacity {
                append(candidate, .probation)
                continue
            }
            let victim = probation.first >= 0 ? probation.first : protected.first
            if victim < 0 || sketch.frequency(nodes[candidate].key) > sketch.frequency(nodes[victim].key) {
                if victim >= 0 { evict(victim) }
                append(candidate, .probation)
            } else {
                evict(candidate, linked: false)
            }
        }
        return false
    }

    private func evict(_ id: Int, linked: Bool = true) {
        if linked { unlink(id) }
        index[nodes[id].key] = nil
        free.append(id)
    }

    private func withList<R>(_ region: Region, _ body: (inout List) -> R) -> R {
        switch region {
        case .window: body(&window)
        case .probation: body(&probation)
        case .protected: body(&protected)
        }
    }

    private func unlink(_ id: Int) {
        let prev = nodes[id].prev, next = nodes[id].next
        if prev >= 0 { nodes[prev].next = next }
        if next >= 0 { nodes[next].prev = prev }
        withList(nodes[id].region) { list in
            if list.first == id { list.first = next }
            if list.last == id { list.last = prev }
            list.count -= 1
        }
        nodes[id].prev = -1
        nodes[id].next = -1
    }

    private func append(_ id: Int, _ region: Region) {
        let last = withList(region) { list -> Int in
            let last = list.last
            if list.first < 0 { list.first = id }
            list.last = id
            list.count += 1
            return last
        }
        nodes[id].region = region
        nodes[id].prev = last
        nodes[id].next = -1
        if last >= 0 { nodes[last].next = id }
    }
}

/// A 4-row, 4-bit count-min sketch with periodic halving (TinyLFU's filter).
struct ReferenceSketch {
    private var rows: [[UInt8]]
    private let mask: Int
    private let sampleSize: Int
    private var additions = 0

    init(entries: Int) {
        // Capped (a capacity may be up to 2^50): at most 4 × 2^22 counters.
        let entries = min(max(entries, 1), 1 << 20)
        var width = 16
        while width < entries * 4 { width <<= 1 }
        rows = Array(repeating: [UInt8](repeating: 0, count: width), count: 4)
        mask = width - 1
        sampleSize = 10 * entries
    }

    private func slot(_ key: Int, _ row: Int) -> Int {
        var h = UInt64(bitPattern: Int64(key)) &+ UInt64(row + 1) &* 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: h ^ (h >> 31)) & mask
    }

    func frequency(_ key: Int) -> Int {
        (0..<4).map { Int(rows[$0][slot(key, $0)]) }.min() ?? 0
    }

    mutating func increment(_ key: Int) {
        for row in 0..<4 {
            let i = slot(key, row)
            if rows[row][i] < 15 { rows[row][i] += 1 }
        }
        additions += 1
        if additions >= sampleSize {
            for row in 0..<4 { for i in rows[row].indices { rows[row][i] >>= 1 } }
            additions /= 2
        }
    }
}
