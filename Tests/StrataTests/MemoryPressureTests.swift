import Strata
import Synchronization
import Testing

@Suite struct MemoryPressureTests {
    @Test func subscribedLevelsEmptyOnAWarningUntilUnsubscribed() async throws {
        let source = MemoryPressure()
        let l1 = MemoryCacheLevel<String, String>(capacity: 100)
        let l2 = MemoryCacheLevel<String, String>(capacity: 100)
        let cache = l1 + l2
        try await cache.set("v", forKey: "k")
        let token = cache.listenToMemoryWarnings(from: source)
        #expect(source.subscriberCount == 1)
        await source.simulateWarning()
        #expect(l1.count == 0 && l2.count == 0)
        unsubscribeToMemoryWarnings(token)
        #expect(source.subscriberCount == 0)
        try await cache.set("v", forKey: "k")
        await source.simulateWarning()
        #expect(l1.count == 1)
        #expect(source.warningsDelivered == 2)
    }

    @Test func parsesMeminfoAndCgroupEvents() {
        let meminfo = "MemTotal:       16318420 kB\nMemFree:         1000 kB\nMemAvailable:    8159210 kB\n"
        let parsed = MemoryReading.parseMeminfo(meminfo)
        #expect(parsed.total == 16_318_420 * 1024)
        #expect(parsed.available == 8_159_210 * 1024)
        #expect(MemoryReading.parseCgroupEvents("low 0\nhigh 3\nmax 1\noom 0\n") == ["low": 0, "high": 3, "max": 1, "oom": 0])
        #expect(MemoryReading.parseMeminfo("garbage\n:::\n").total == nil)
    }

    @Test func systemReadingWorksOnThisMachine() {
        let reading = MemoryReading.system()
        #expect((reading.total ?? 0) > 0)
        #expect((reading.available ?? -1) >= 0)
    }

    @Test func monitorWarnsOncePerCrossingAndOnCgroupEvents() async {
        let source = MemoryPressure()
        let warnings = Atomic<Int>(0)
        _ = source.subscribe { warnings.add(1, ordering: .relaxed) }
        let next = Mutex(MemoryReading(total: 100, available: 50))
        let monitor = LinuxMemoryPressureMonitor(source: source, availableFraction: 0.05) { next.withLock { $0 } }
        #expect(await monitor.poll() == false)
        next.withLock { $0.available = 4 }
        #expect(await monitor.poll() == true)
        #expect(await monitor.poll() == false, "still low: no repeat until it recovers")
        next.withLock { $0.available = 11 }
        #expect(await monitor.poll() == false)
        next.withLock { $0.available = 3 }
        #expect(await monitor.poll() == true)
        next.withLock { $0 = MemoryReading(total: 100, available: 90, cgroupEvents: ["high": 1]) }
        _ = await monitor.poll()
        next.withLock { $0.cgroupEvents["high"] = 2 }
        #expect(await monitor.poll() == true, "the kernel throttled the cgroup")
        next.withLock { $0 = MemoryReading(total: 100, available: 90, cgroupCurrent: 97, cgroupLimit: 100, cgroupEvents: ["high": 2]) }
        #expect(await monitor.poll() == true, "cgroup limit nearly reached")
        #expect(warnings.load(ordering: .relaxed) == 4)
    }

    @Test func startedMonitorDeliversAWarning() async throws {
        let source = MemoryPressure()
        let gate = Gate()
        _ = source.subscribe { gate.open() }
        let monitor = LinuxMemoryPressureMonitor(source: source, interval: .milliseconds(10)) {
            MemoryReading(total: 100, available: 1)
        }
        monitor.start()
        try await gate.wait()
        monitor.stop()
        #expect(source.warningsDelivered >= 1)
    }
}
