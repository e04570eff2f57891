import Dispatch

/// Entry IO larger than ``DiskCacheLevel/inlineIOLimit`` (and access-time
/// flushes) runs here, off the cooperative threads.
let diskIOQueue = DispatchQueue(label: "strata.disk-io", qos: .utility, attributes: .concurrent)

/// Runs blocking `work` on the disk IO queue and resumes with its result.
func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        diskIOQueue.async { continuation.resume(returning: work()) }
    }
}
