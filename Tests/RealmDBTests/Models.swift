import Foundation
import RealmDB
import TestSupport

// The seeds' models (realm-swift-model-data-ja, realm-swift-notes-ja) and a few more for the tests.

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: Person?
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var nickname: String?
    @Persisted var age: Int?
    @Persisted var dogs: List<Dog>
    @Persisted var tags: List<String>
    @Persisted(originProperty: "owner") var ownedDogs: LinkingObjects<Dog>
}

/// Every value type, required and optional.
final class AllTypes: Object {
    @Persisted(primaryKey: true) var id = ObjectId.generate()
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var objectId = ObjectId.zero
    @Persisted var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    @Persisted var decimal = Decimal128.zero
    @Persisted var mixed = AnyRealmValue.none
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUUID: UUID?
    @Persisted var optDecimal: Decimal128?
    @Persisted var ints: List<Int>
    @Persisted var optStrings: List<String?>
    @Persisted var dates: List<Date>
}

/// The older declaration style: static primaryKey/indexedProperties and plain List/LinkingObjects fields.
final class OldStyleOwner: Object {
    @Persisted var code = ""
    @Persisted var title = ""
    let pets = List<OldStylePet>()
    @Persisted var transient = 0
    override class func primaryKey() -> String? { "code" }
    override class func indexedProperties() -> [String] { ["title"] }
    override class func ignoredProperties() -> [String] { ["transient"] }
}

final class OldStylePet: Object {
    @Persisted var name = ""
    let owners = LinkingObjects(fromType: OldStyleOwner.self, property: "pets")
}

/// An in-memory Realm of its own for one test.
func memoryRealm(_ types: [Object.Type], _ name: String = #function) throws -> Realm {
    try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "\(name)-\(UUID())", objectTypes: types))
}

func fileConfig(_ dir: TempDir, _ types: [Object.Type], name: String = "test.realm", schemaVersion: UInt64 = 0) -> Realm.Configuration {
    Realm.Configuration(fileURL: URL(fileURLWithPath: dir.file(name)), schemaVersion: schemaVersion, objectTypes: types)
}
