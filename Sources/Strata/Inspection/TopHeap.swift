/// The `limit` greatest elements seen, by `isHigher`, in a min-heap of at
/// most `limit`: offering one costs O(log limit); a walk compares a candidate
/// with ``lowest`` first, to skip building what would not be kept.
struct TopHeap<Element> {
    let limit: Int
    /// Whether the first ranks above the second.
    let isHigher: (Element, Element) -> Bool
    /// The lowest kept at index 0.
    private(set) var elements: [Element] = []

    init(limit: Int, isHigher: @escaping (Element, Element) -> Bool) {
        self.limit = max(0, limit)
        self.isHigher = isHigher
        elements.reserveCapacity(self.limit)
    }

    /// The least kept once the heap is full (a candidate must rank above it);
    /// `nil` while there is room.
    var lowest: Element? { elements.count < limit ? nil : elements.first }

    /// Keeps `element` if it is among the `limit` highest so far.
    mutating func offer(_ element: Element) {
        guard limit > 0 else { return }
        if elements.count < limit {
            elements.append(element)
            siftUp(elements.count - 1)
        } else if isHigher(element, elements[0]) {
            elements[0] = element
            siftDown(0)
        }
    }

    /// The kept elements, highest first.
    func sorted() -> [Element] { elements.sorted(by: isHigher) }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard isHigher(elements[parent], elements[child]) else { return }
            elements.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var lowest = parent
            if left < elements.count && isHigher(elements[lowest], elements[left]) { lowest = left }
            if right < elements.count && isHigher(elements[lowest], elements[right]) { lowest = right }
            guard lowest != parent else { return }
            elements.swapAt(parent, lowest)
            parent = lowest
        }
    }
}
