"""The words the statement reader knows (pure data): which predicates state which family of
fact, which modifiers make a clause unreal, and which nouns name a kind of thing.

Families are those of the labelled self-statement set (``kenning/bench/data/self_statements``):
``location``, ``origin``, ``employer``, ``occupation``, ``education``, ``language``,
``relationship``, ``family``, ``pet``, ``diet``, ``allergy``, ``health``, ``hobby``,
``preference``, ``device``, ``finance``, ``identity``, ``name``, ``age``, ``contact``.
"""

from __future__ import annotations

from typing import Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- the clause: who speaks, and whether it states anything ---------------------------------

FIRST_PERSON: Final = _words("i we me us")
POSSESSIVE: Final = _words("my our")
RELATIONS: Final = _words(
    "wife husband partner girlfriend boyfriend fiance fiancee fiancé fiancée spouse mother mom "
    "mum father dad parents sister brother sibling siblings son daughter kid kids child children "
    "twins baby friend bestie boss manager colleague coworker roommate flatmate neighbor "
    "neighbour grandma grandmother grandpa grandfather grandparents aunt uncle cousin niece "
    "nephew stepson stepdaughter stepmom stepdad in-laws"
)
KIN: Final = RELATIONS - _words("friend bestie boss manager colleague coworker roommate "
                                "flatmate neighbor neighbour")  # fmt: skip
# Modals that make a clause unreal ("I'd love to work at Google", "I'll move to Rome").
UNREAL_MODALS: Final = _words("will would could might may should shall must 'll 'd wo ought")
# A clause under one of these verbs is wished, planned or imagined, not stated.
UNREAL_VERBS: Final = _words(
    "want wish hope plan consider think look dream intend aim try expect need imagine pretend "
    "suppose decide mean hesitate seek prepare excite wonder debate contemplate tempt go "
    "ask promise wait"
)
UNREAL_ADJECTIVES: Final = _words("ready excited interested eager keen able willing likely sure "
                                  "going about")  # fmt: skip
# A clause under one of these verbs is what someone else said or believes of the speaker.
REPORT_VERBS: Final = _words(
    "say tell think believe assume claim insist suggest know reckon guess mention feel hear "
    "call accuse"
)
# "I think I'm allergic": the speaker hedges; the fact is kept as inferred.
HEDGE_VERBS: Final = _words("think guess believe suppose reckon")
# An imperative of one of these withdraws the statement it governs ("forget that I like jazz").
RETRACT_VERBS: Final = _words("forget ignore disregard remove delete erase scratch")
CONDITIONS_MARKS: Final = _words("if unless whether once")
PAST_MARKERS: Final = _words("until till ago formerly previously")
CURRENT_ADVERBS: Final = _words("now currently nowadays still today")
WITHDRAW_ADVERBS: Final = _words("anymore longer")
SARCASM_MARKERS: Final = ("yeah right", "yeah, right", "just kidding", "as if", "jk", "lol jk",
                          "/s", "not!", "oh sure", "sure, because", "totally not")  # fmt: skip

# -- values: which nouns name a kind of thing ------------------------------------------------

DIETS: Final = _words(
    "vegan vegetarian pescatarian pescetarian keto paleo gluten-free dairy-free kosher halal "
    "teetotal teetotaler sober flexitarian carnivore lactose-free sugar-free plant-based"
)
# Ways of eating told as practices rather than as what one is: "I do intermittent fasting".
DIET_PRACTICES: Final = {"fasting", "intermittent fasting", "low-carb", "whole30", "low fodmap"}
FOODS: Final = _words(
    "meat pork beef chicken fish seafood shellfish dairy milk cheese eggs egg gluten wheat bread "
    "sugar alcohol booze beer wine coffee caffeine tea soda carbs sweets chocolate nuts peanuts "
    "red processed junk fast food meals spicy honey"
)
HEALTH_ADJECTIVES: Final = _words(
    "diabetic asthmatic epileptic colorblind colourblind pregnant deaf blind autistic dyslexic "
    "anemic anaemic arthritic celiac coeliac immunocompromised disabled sober insomniac"
)
# What happened to a body part: "a herniated disc", "a torn ACL" is a condition.
INJURIES: Final = _words(
    "herniated broken torn sprained fractured slipped dislocated ruptured pulled bulging"
)
BODY_PARTS: Final = _words(
    "disc back knee ankle wrist arm leg hip shoulder elbow acl meniscus hamstring rib ribs "
    "nose finger toe foot hand neck spine collarbone achilles tendon ligament jaw tooth "
    "pelvis shin thumb vertebra calf groin"
)
HEALTH_NOUNS: Final = _words(
    "asthma diabetes adhd add autism depression anxiety migraine migraines epilepsy arthritis "
    "insomnia dyslexia cancer covid ibs crohn's tinnitus eczema psoriasis allergies hypertension "
    "condition disorder syndrome disease injury surgery smoker vegan pain sclerosis fibromyalgia "
    "ptsd ocd bipolar scoliosis apnea sciatica"
) - _words("vegan") | {"blood pressure", "heart condition", "celiac disease", "hay fever"}
ALLERGY_NOUNS: Final = _words("allergy allergies intolerance")
RELATIONSHIP_STATES: Final = _words("married single divorced engaged widowed separated taken "
                                    "dating")  # fmt: skip
PARTNERS: Final = _words("boyfriend girlfriend husband wife partner fiance fiancee fiancé fiancée "
                         "spouse")  # fmt: skip
FAMILY_NOUNS: Final = _words(
    "kid kids child children son sons daughter daughters twins triplets baby babies toddler "
    "brother brothers sister sisters sibling siblings stepson stepdaughter grandchild "
    "grandchildren grandkids teenager teenagers teen teens stepkids newborn"
)
# A speaker's children: "my son Ben", "our daughter Mia".
CHILDREN: Final = _words("son daughter kid child baby stepson stepdaughter")
PARENT_NOUNS: Final = _words("mom mum mother dad father parent grandmother grandfather grandma "
                             "grandpa granny grandparent")  # fmt: skip
PETS: Final = _words(
    "dog dogs cat cats puppy puppies kitten kittens parrot parrots bird birds budgie canary "
    "fish goldfish hamster hamsters rabbit rabbits bunny guinea pig pigs turtle tortoise snake "
    "lizard gecko iguana dragon horse horses pony ferret rat rats mouse mice chickens hens goat "
    "goats pet pets retriever terrier labrador lab poodle beagle bulldog spaniel shepherd "
    "husky corgi dachshund collie pug chihuahua rottweiler greyhound tabby axolotl"
)
DEVICE_NOUNS: Final = _words(
    "phone smartphone cellphone laptop notebook computer pc desktop tablet car cars bike bicycle "
    "ebike e-bike motorbike motorcycle scooter truck van suv watch smartwatch camera console tv "
    "television e-reader ereader kindle headphones earbuds drive printer router speaker "
    "keyboard monitor mac chromebook ipad iphone android pixel galaxy thinkpad fitbit "
    "garmin kobo tesla prius linux windows ubuntu macos ios playstation xbox switch netflix "
    "spotify vim emacs vscode macbook imac ipod airpods python javascript rust java app apps "
    "subscription samsung charger twitter instagram facebook tiktok snapchat reddit linkedin "
    "whatsapp telegram notion obsidian evernote slack discord duolingo strava tinder bumble "
    "hinge dslr mirrorless gopro drone ereader glasses landline"
) | {"power bank", "hard drive", "contact lens", "contact lenses", "hearing aid", "hearing aids"}
# Makers of cars and scooters: "bought an old Mazda MX-5", "sold the Clio" (with its maker).
VEHICLE_MAKERS: Final = _words(
    "audi bmw byd chevrolet chevy citroen citroën dacia fiat ford honda hyundai jeep kia lexus "
    "mazda mercedes mini mitsubishi nissan opel peugeot porsche renault seat skoda subaru suzuki "
    "toyota vauxhall vespa volkswagen vw volvo yamaha ducati"
)
SERVICES: Final = _words("netflix spotify hulu disney+ prime youtube uber lyft")
LANGUAGES: Final = _words(
    "english spanish french german italian portuguese dutch swedish norwegian danish finnish "
    "icelandic polish czech slovak hungarian romanian bulgarian greek turkish russian ukrainian "
    "arabic hebrew persian farsi hindi urdu bengali punjabi tamil telugu chinese mandarin "
    "cantonese japanese korean vietnamese thai indonesian malay tagalog swahili latin catalan "
    "basque welsh irish gaelic croatian serbian esperanto asl"
)
EDUCATION_NOUNS: Final = _words(
    "degree degrees master master's masters bachelor bachelor's bachelors phd doctorate "
    "diploma course courses mba certificate program programme major minor school university "
    "college bootcamp apprenticeship certification"
)
SCHOOL_NOUNS: Final = _words("school university college academy institute uni high "
                             "polytechnic conservatory seminary")  # fmt: skip
WORKPLACE_NOUNS: Final = _words(
    "company firm startup start-up business bakery hospital clinic school university agency "
    "council bank shop store restaurant cafe café studio office lab factory ministry "
    "government nonprofit charity newspaper magazine warehouse hotel pharmacy supermarket "
    "airport library museum winery brewery salon gym nursery fintech"
)
JOB_NOUNS: Final = _words("job position role gig career")
# Nouns that name a paid occupation: "I'm a nurse" is the user's occupation (one at a time, a
# new one replaces it), where "I'm an introvert" is an identity among others.
OCCUPATIONS: Final = _words(
    "accountant actor actress administrator analyst animator architect artist assistant "
    "attorney auditor baker banker barber barista bartender biologist bookkeeper broker builder "
    "butcher captain carer caregiver carpenter cashier ceo cfo chef chemist cleaner clerk coach "
    "consultant contractor coordinator copywriter counsellor counselor courier cto dentist "
    "designer detective dev developer dietitian director dispatcher doctor driver economist "
    "editor electrician engineer executive farmer firefighter fisherman founder freelancer "
    "geologist guard hairdresser housekeeper illustrator inspector instructor intern "
    "interpreter janitor journalist judge labourer laborer lawyer lecturer librarian lifeguard "
    "manager marketer mechanic midwife miner musician nanny nurse nutritionist officer "
    "optician optometrist paralegal paramedic pharmacist photographer physician physicist "
    "physiotherapist pilot planner plumber policeman postman producer professor programmer "
    "psychiatrist psychologist realtor receptionist recruiter researcher salesman salesperson "
    "scientist secretary server soldier sonographer statistician stylist supervisor surgeon "
    "surveyor tailor teacher technician tester therapist trader trainer translator tutor vet "
    "veterinarian waiter waitress welder writer"
)
# Agent nouns that name a line of work when a noun before them says what it is done to or
# with: "a dog walker", "a house sitter", "a baggage handler" (not "a hard worker", "a walker").
WORK_AGENTS: Final = _words(
    "walker groomer sitter painter handler maker fitter installer repairer washer picker "
    "packer loader mover breeder worker seller dealer keeper"
)
OCCUPATION_ADJECTIVES: Final = _words("retired self-employed unemployed freelance jobless employed")
CONTACT_NOUNS: Final = {
    "email": "email", "e-mail": "email", "mail": "email", "phone": "phone number",
    "number": "phone number", "cell": "phone number", "mobile": "phone number",
    "address": "address", "handle": "handle", "username": "handle", "website": "website",
}  # fmt: skip
# "my X is Y": the attribute X names, by the head noun of X.
OWN_ATTRIBUTES: Final = {
    "name": "name", "nickname": "name", "birthday": "age", "age": "age", "pronouns": "identity",
    "pronoun": "identity",
    "nationality": "origin", "hometown": "origin", "job": "occupation",
    "occupation": "occupation", "profession": "occupation", "title": "occupation",
    "employer": "employer", "company": "employer", "hobby": "hobby", "hobbies": "hobby",
    "passion": "hobby", "language": "language", "salary": "finance", "income": "finance",
    "bank": "finance", "diet": "diet",
}  # fmt: skip
# "Photography is my thing": the subject is the value.
OWN_NOUNS: Final = {"thing": "hobby", "obsession": "hobby", "passion": "hobby",
                    "hobby": "hobby", "favorite": "preference", "favourite": "preference",
                    "fave": "preference", "jam": "preference", "language": "language",
                    "tongue": "language"}  # fmt: skip
# Modifiers that judge or date a thing rather than name its kind ("my old ThinkPad").
EVALUATIVE: Final = _words(
    "old new good great nice amazing awesome lovely beautiful wonderful favorite favourite "
    "fave current latest first second last little tiny huge big best better absolute real "
    "trusty beloved own very really super so cute fantastic excellent terrible awful decent "
    "fine perfect incredible brand-new another such whole entire same"
)
# Kinds of thing spoken of with "the" in general ("I love the blues", "I hate the cold"), not
# a particular one of the conversation, when nothing else modifies them.
GENERIC_WITH_THE: Final = _words(
    "blues outdoors ocean sea seaside beach mountains countryside wilderness woods forest desert "
    "theatre theater opera ballet symphony cinema movies radio rain snow cold heat sun summer "
    "winter spring autumn fall"
)
INTENSIFIERS: Final = _words("very really so super quite pretty extremely too totally")
# Objects that point at the conversation, not at a thing in general ("I love that idea").
DEICTIC: Final = _words(
    "it this that these those them him her one ones you yours something anything everything "
    "nothing idea ideas option options suggestion suggestions list tip tips one way thing things "
    "stuff lot bit kind sort part way time"
)
GREETINGS: Final = _words("hi hello hey greetings morning evening afternoon")

# -- predicates: which verbs state which family ---------------------------------------------

# Verbs whose place argument is where the speaker lives.
LIVE_VERBS: Final = _words("live reside stay settle")
MOVE_VERBS: Final = _words("move relocate emigrate immigrate")
ORIGIN_VERBS: Final = _words("grow bear raise")
WORK_VERBS: Final = _words("work intern volunteer freelance")
HOBBY_VERBS: Final = _words(
    "knit crochet sew bake cook paint draw sketch sing dance surf swim climb hike run jog cycle "
    "bike ski snowboard skate garden fish hunt sail row box fence golf bowl write journal "
    "meditate garden volunteer quilt brew skateboard kayak camp blog vlog stream code collect"
)
# play/do/practice/go take their activity as object ("I play the guitar" -> guitar).
LIGHT_HOBBY_VERBS: Final = _words("play do practice practise go take")
LIKE_VERBS: Final = {"like": "likes", "love": "loves", "enjoy": "likes", "adore": "loves",
                     "prefer": "prefers", "dig": "likes", "fancy": "likes"}  # fmt: skip
DISLIKE_VERBS: Final = _words("hate dislike detest loathe despise")
HAVE_VERBS: Final = _words("have own get adopt buy")
USE_VERBS: Final = _words("use drive ride run")
# A change of state: told in the past, its result holds now ("I moved to Lisbon").
CHANGE_VERBS: Final = _words(
    "move relocate join start get adopt buy switch swap replace ditch trade marry divorce "
    "retire hire become diagnose graduate begin settle take enroll enrol sign land"
)
# Verbs that withdraw their object ("I stopped eating meat", "I sold my car").
STOP_VERBS: Final = _words("stop quit drop leave sell cancel abandon ditch uninstall")
SWITCH_VERBS: Final = _words("switch swap replace ditch trade change go move convert transition")
# Activities done for their own sake (a hobby when stated as done or withdrawn).
ACTIVITIES: Final = _words(
    "tennis soccer football golf chess yoga pilates guitar piano violin cello drums bass "
    "ukulele flute saxophone trumpet harp basketball baseball volleyball hockey rugby cricket "
    "badminton squash swimming running jogging cycling biking climbing bouldering hiking "
    "surfing skiing snowboarding skating dancing ballet salsa painting drawing knitting "
    "crocheting sewing baking cooking gardening fishing photography pottery woodworking "
    "birdwatching gaming boxing karate judo fencing rowing sailing kayaking marathons poker "
    "crossfit gym meditation journaling"
)
# Lines of work ("I went from teaching to UX design").
FIELDS: Final = _words(
    "teaching nursing law medicine design engineering accounting marketing finance sales "
    "consulting journalism research academia software programming development management "
    "retail hospitality tech ux banking architecture construction logistics insurance"
)
STUDENTS: Final = _words(
    "student pupil junior senior sophomore freshman undergrad undergraduate postgrad grad"
)
IDENTITY_ADJECTIVES: Final = _words(
    "gay straight bi bisexual lesbian queer trans transgender nonbinary non-binary asexual "
    "muslim christian jewish hindu buddhist atheist catholic agnostic sikh mormon introverted "
    "extroverted shy religious spiritual"
)
CLUBS: Final = _words(
    "club team band choir group league orchestra society crew quartet trio ensemble troupe"
)
# Teams and fields one works "in": "I'm in Marketing" names no place.
DEPARTMENTS: Final = _words(
    "sales marketing finance accounting engineering design product legal operations ops hr "
    "it research support procurement compliance admin administration management tech "
    "retail healthcare education consulting banking insurance publishing"
)
# Participles that name a state, not an event: "Based in Nairobi" holds now.
STATE_PARTICIPLES: Final = _words("base locate station headquarter")
# A change told in the present progressive is arranged, not done: "I'm moving to Nairobi".
ARRANGED_VERBS: Final = _words("move relocate join marry divorce retire emigrate switch leave quit")
# Countries and regions by their usual English names: "I left Spain" leaves a place, where a
# name the reader does not know ("I left Deloitte") is taken for an employer.
COUNTRIES: Final = _words(
    "afghanistan albania algeria argentina armenia australia austria azerbaijan bahrain "
    "bangladesh belarus belgium bolivia bosnia brazil bulgaria cambodia cameroon canada chile "
    "china colombia croatia cuba cyprus czechia denmark ecuador egypt england estonia ethiopia "
    "finland france georgia germany ghana greece guatemala hungary iceland india indonesia iran "
    "iraq ireland israel italy jamaica japan jordan kazakhstan kenya korea kosovo kuwait latvia "
    "lebanon libya lithuania luxembourg malaysia malta mexico moldova mongolia montenegro "
    "morocco nepal netherlands holland nigeria norway oman pakistan palestine panama paraguay "
    "peru philippines poland portugal qatar romania russia rwanda scotland senegal serbia "
    "singapore slovakia slovenia somalia spain sudan sweden switzerland syria taiwan tanzania "
    "thailand tunisia turkey uganda ukraine uruguay usa uk america uzbekistan venezuela vietnam "
    "wales yemen zambia zimbabwe"
)
# Medicines taken over time: "I'm on antidepressants", "I take insulin", "stopped taking
# metformin" state a condition being treated (health), as the label guide files medication.
MEDICATIONS: Final = _words(
    "medication medications meds medicine medicines pills insulin metformin antidepressants "
    "antidepressant statins statin inhaler inhalers steroids antibiotics antihistamines "
    "antipsychotics anticoagulants thinners hrt testosterone estrogen oestrogen progesterone "
    "lithium ssri ssris sertraline fluoxetine citalopram escitalopram prozac zoloft lexapro "
    "wellbutrin bupropion adderall ritalin vyvanse methylphenidate levothyroxine thyroxine "
    "warfarin eliquis ozempic semaglutide wegovy mounjaro prednisone gabapentin melatonin "
    "suboxone methadone epipen chemo chemotherapy dialysis"
) | {"blood thinners", "birth control", "the pill", "beta blockers"}
# Stems of the international nonproprietary names of medicines (WHO INN): "amlodipine",
# "losartan", "atorvastatin", "metoprolol" name a medicine whatever the brand.
MEDICINE_STEMS: Final = (
    "dipine",
    "sartan",
    "statin",
    "olol",
    "pril",
    "prazole",
    "cillin",
    "mycin",
    "cycline",
    "floxacin",
    "oxetine",
    "aline",
    "azepam",
    "zolam",
    "triptan",
    "lukast",
    "tidine",
    "afil",
    "gliptin",
    "gliflozin",
    "glutide",
    "mab",
    "tinib",
    "semide",
    "thiazide",
    "parin",
    "xaban",
)
# Habits kept or given up that the label guide files by their family: "I quit smoking" is
# health, "I quit drinking" a diet.
HABITS: Final = {"smoking": "health", "vaping": "health", "smoker": "health",
                 "drinking": "diet", "alcohol": "diet"}  # fmt: skip
# Demonyms as nouns: "I'm a Kiwi", "a proud Texan", "a Brit in Madrid" say where the speaker
# is from (origin), not what they do.
DEMONYMS: Final = _words(
    "kiwi kiwis brit brits scot scots aussie aussies yank yankee texan californian floridian "
    "new yorker londoner parisian berliner dubliner glaswegian mancunian liverpudlian geordie "
    "cockney bostonian chicagoan torontonian muscovite canadian american mexican brazilian "
    "argentinian argentine chilean peruvian colombian venezuelan cuban jamaican irishman "
    "irishwoman englishman englishwoman welshman welshwoman scotsman scotswoman frenchman "
    "frenchwoman dutchman dutchwoman german italian spaniard portuguese swede dane norwegian "
    "finn icelander pole czech slovak hungarian romanian bulgarian greek turk russian "
    "ukrainian israeli palestinian lebanese syrian iraqi iranian egyptian moroccan algerian "
    "tunisian nigerian ghanaian kenyan ethiopian indian pakistani bangladeshi "
    "nepali chinese japanese korean vietnamese thai filipino filipina indonesian "
    "malaysian singaporean australian bavarian catalan basque quebecer quebecois "
    "midwesterner southerner northerner yorkshireman cornishman"
) | {"new yorker", "new zealander", "south african", "sri lankan"}
