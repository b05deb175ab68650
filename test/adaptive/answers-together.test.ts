import { describe, expect, it } from 'vitest';
import {
  AnswersTogether,
  BURST_SHARE_MAX,
  CHANCE_SHARE_MAX,
  TOGETHER_MS,
} from '../../src/hedging/answers-together.js';

describe('AnswersTogether', () => {
  it('tells an answer that came within TOGETHER_MS of the one before, while answers are spread out', () => {
    const answers = new AnswersTogether();
    const together: boolean[] = [];
    for (let t = 0; t < 500; t += 5) together.push(answers.note(t));
    expect(together.every((x) => !x)).toBe(true);
    expect(answers.note(500)).toBe(false);
    expect(answers.note(500 + TOGETHER_MS)).toBe(true);
    expect(answers.note(500 + 2 * TOGETHER_MS + 0.5)).toBe(false);
  });

  it('never counts an answer whose time is not known (NaN), nor the one after it', () => {
    const answers = new AnswersTogether();
    expect(answers.note(Number.NaN)).toBe(false);
    expect(answers.note(Number.NaN)).toBe(false);
    expect(answers.note(0)).toBe(false);
    expect(answers.note(0)).toBe(true);
  });

  it(`counts none as together once more than ${BURST_SHARE_MAX} of the recent answers came together`, () => {
    // A frozen clock (or thousands of calls a second): every answer comes with the one before.
    const answers = new AnswersTogether();
    const together: boolean[] = [];
    for (let i = 0; i < 100; i++) together.push(answers.note(0));
    // Together while the share was still low (the first answer has no one before it), then never.
    const first = together.indexOf(false, 1);
    expect(first).toBeGreaterThan(20);
    expect(first).toBeLessThan(50);
    expect(together.slice(first).every((x) => !x)).toBe(true);
  });

  it(`where more than ${CHANCE_SHARE_MAX} come with the one before, counts only a run of them that chance rarely makes`, () => {
    // Every fourth answer comes with the one before (regime B of bench:adaptive: 0.23-0.26 of them).
    const answers = new AnswersTogether();
    let t = 0;
    let counted = 0;
    for (let i = 0; i < 400; i++) {
      t += i % 4 === 3 ? 0 : 5;
      // Once the share has settled (from 0 at the start, where the pairs do count).
      counted += answers.note(t) && i >= 200 ? 1 : 0;
    }
    expect(counted).toBe(0);
    // A pair: as common as the pattern's own (0.25 > 0.2). A third with them: 0.25² ≤ 0.2.
    t += 5;
    expect([answers.note(t), answers.note(t), answers.note(t), answers.run]).toEqual([false, false, true, 3]);
    t += 5;
    expect([answers.note(t), answers.run]).toEqual([false, 1]);
  });

  it('counts them again once answers are spread out for a while', () => {
    const answers = new AnswersTogether();
    for (let i = 0; i < 100; i++) answers.note(0);
    let t = 0;
    const spread = (n: number) => {
      for (let i = 0; i < n; i++) {
        t += 5;
        answers.note(t);
      }
    };
    spread(10);
    expect(answers.note(t)).toBe(false);
    spread(200);
    expect(answers.note(t)).toBe(true);
  });

  it('tolerates the share of a pause now and then: a pause every 100 answers, four answers each', () => {
    const answers = new AnswersTogether();
    let t = 0;
    let counted = 0;
    for (let pause = 0; pause < 20; pause++) {
      for (let i = 0; i < 96; i++) {
        t += 5;
        answers.note(t);
      }
      t += 15;
      for (let i = 0; i < 4; i++) counted += answers.note(t) ? 1 : 0;
    }
    // Three of each pause's four answers came with the one before.
    expect(counted).toBe(60);
  });
});
