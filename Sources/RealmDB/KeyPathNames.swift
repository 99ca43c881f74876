import Foundation

/// The property names of Swift key paths (`\Dog.age`, `\Dog.owner?.name`), for the key-path forms of
/// realm-swift's API (`sorted(by:)`, `min(of:)`, `observe(keyPaths:)`, ...).
///
/// A `@Persisted` property is read through its wrapper, so a key path to it cannot be inspected (it is a
/// computed property). Instead the key path is applied to an instance whose fields record their property's
/// index when read; a to-one link reads as another such instance, so a path through links records each step.
enum KeyPathNames {
    private final class Recorder {
        var names: [String] = []
    }

    private static let threadKey = "io.realm-browser.keyPathRecorder"

    /// The dotted name of `keyPath` (`"owner.name"`). A key path that reads no `@Persisted` property (a
    /// computed property, a field declared in the older `let dogs = List<Dog>()` style) stops the program.
    static func name<Root: Object>(_ keyPath: PartialKeyPath<Root>) -> String {
        let recorder = Recorder()
        let dict = Thread.current.threadDictionary
        let outer = dict[threadKey]
        dict[threadKey] = recorder
        defer { dict[threadKey] = outer }
        _ = recordingInstance(Root.self)[keyPath: keyPath]
        precondition(!recorder.names.isEmpty, "the key path \(keyPath) names no persisted property of \(Root.self)")
        return recorder.names.joined(separator: ".")
    }

    /// An unmanaged instance of `type` whose `@Persisted` fields record their property when read.
    static func recordingInstance<T: Object>(_ type: T.Type) -> T {
        let mapping: ModelMapping
        do {
            mapping = try ModelMapping.mapping(for: type)
        } catch {
            preconditionFailure("\(type) is not a valid model class: \(error)")
        }
        let object = (mapping.type.init() as? T) ?? T()
        for (i, f) in mapping.fields.enumerated() {
            object.withFieldPointer(f.offset) { f.accessor.bindRecording($0, index: i) }
        }
        return object
    }

    /// Called by a recording field: notes the property and gives a value to read on (another recording
    /// instance for a to-one link).
    static func record<Value: _Persistable>(_ object: Object, _ index: Int, _ type: Value.Type) -> Value {
        if let recorder = Thread.current.threadDictionary[threadKey] as? Recorder,
           let mapping = try? ModelMapping.mapping(for: Swift.type(of: object)) {  // the instance was made from this mapping
            recorder.names.append(mapping.fields[index].name)
        }
        if let link = Value.self as? _RecordingLink.Type, let v = link._rlmRecordingInstance() as? Value { return v }
        return Value._rlmDefaultValue()
    }
}

/// A to-one link type, whose recording value is a recording instance of its target.
protocol _RecordingLink {
    static func _rlmRecordingInstance() -> Any
    /// The class the link leads to (`Dog` for `Dog?`).
    static var _rlmObjectType: Object.Type { get }
}

extension Optional: _RecordingLink where Wrapped: Object {
    static func _rlmRecordingInstance() -> Any { Optional(KeyPathNames.recordingInstance(Wrapped.self)) as Any }
    static var _rlmObjectType: Object.Type { Wrapped.self }
}

// MARK: - Key-path forms

extension RealmCollection where Element: Object {
    /// The elements sorted by the property `keyPath` names.
    public func sorted<V: _Persistable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        sorted(byKeyPath: KeyPathNames.name(keyPath), ascending: ascending)
    }

    /// The elements sorted by the properties the key paths name, in order.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
        let names: [String] = keyPaths.map { KeyPathNames.name($0) }
        return distinct(by: names)
    }

    /// The smallest value of the property `keyPath` names, or nil when there is none.
    public func min<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? { min(ofProperty: KeyPathNames.name(keyPath)) }
    /// The largest value of the property `keyPath` names, or nil when there is none.
    public func max<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? { max(ofProperty: KeyPathNames.name(keyPath)) }
    /// The sum of the numeric property `keyPath` names; 0 when empty.
    public func sum<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V { sum(ofProperty: KeyPathNames.name(keyPath)) }
    /// The mean of the numeric property `keyPath` names, or nil when empty.
    public func average<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? { average(ofProperty: KeyPathNames.name(keyPath)) }

    /// `observe(keyPaths:on:_:)` with key paths.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        let names: [String] = keyPaths.map { KeyPathNames.name($0) }
        return observe(keyPaths: names, on: queue, block)
    }
}

extension Object {
    /// `observe(keyPaths:on:_:)` with key paths of the object's class.
    public func observe<T: Object>(keyPaths: [PartialKeyPath<T>], on queue: DispatchQueue? = nil,
                                   _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        let names: [String] = keyPaths.map { KeyPathNames.name($0) }
        return observe(keyPaths: names, on: queue, block)
    }
}

extension SortDescriptor {
    /// A sort by the property a key path names.
    public init<Root: Object, V: _Persistable>(keyPath: KeyPath<Root, V>, ascending: Bool = true) {
        self.init(keyPath: KeyPathNames.name(keyPath), ascending: ascending)
    }
}
